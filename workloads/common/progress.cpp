#include "workloads/common/progress.hpp"

#include <cstdio>
#include <memory>

namespace gnnbed {

StepProgress stderr_step_progress(const std::string& program) {
  struct Last {
    std::string step;
    int tenth = -1;
  };
  auto last = std::make_shared<Last>();
  return [program, last](const std::string& step, std::int64_t done, std::int64_t total) {
    const int tenth = total > 0 ? static_cast<int>(10 * done / total) : 10;
    if (step == last->step && tenth == last->tenth) return;
    last->step = step;
    last->tenth = tenth;
    std::fprintf(stderr, "%s: %s: %lld / %lld (%d %%)\n", program.c_str(), step.c_str(),
                 static_cast<long long>(done), static_cast<long long>(total), tenth * 10);
  };
}

}  // namespace gnnbed
