// Agreeing that every rank can start (setup_agreement.hpp).
#include "exec/tools/setup_agreement.hpp"

#include <boost/program_options.hpp>
#include <cstdio>

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::string setup_problem(const std::function<void()>& prepare, int& exit_code) {
  try {
    prepare();
    return "";
  } catch (const boost::program_options::error& error) {
    exit_code = 2;
    return std::string(error.what()) + " (see --help)";
  } catch (const ConfigError& error) {
    exit_code = 2;
    return error.what();
  } catch (const std::exception& error) {
    exit_code = 1;
    return error.what();
  }
}

std::optional<int> setup_failure_code(MpiTransport& transport, const std::string& problem,
                                      int exit_code) {
  const auto problems =
      transport.gather_to_root(problem.empty() ? "" : std::to_string(exit_code) + " " + problem);
  const std::int64_t failures =
      transport.sum_over_ranks(static_cast<std::int64_t>(problem.empty() ? 0 : 1));
  if (failures == 0) return std::nullopt;
  int code = 1;
  if (transport.rank() == 0) {
    for (std::size_t r = 0; r < problems.size(); ++r) {
      if (problems[r].empty()) continue;
      const auto space = problems[r].find(' ');
      code = std::stoi(problems[r].substr(0, space));
      std::fprintf(stderr, "run_experiment: rank %zu: %s\n", r,
                   problems[r].substr(space + 1).c_str());
      break;
    }
  }
  return static_cast<int>(transport.max_over_ranks(static_cast<double>(code)));
}

}  // namespace gnnbed
