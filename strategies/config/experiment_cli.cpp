#include "strategies/config/experiment_cli.hpp"

#include <algorithm>
#include <iostream>

#include "workloads/common/errors.hpp"

namespace gnnbed {

namespace po = boost::program_options;

std::optional<CommandLine> parse_command_line(
    int argc, char** argv, const po::options_description& options,
    const po::positional_options_description& positional) {
  CommandLine command_line{
      po::command_line_parser(argc, argv).options(options).positional(positional).run(), {}};
  po::store(command_line.parsed, command_line.values);
  if (command_line.values.count("help") != 0) {
    std::cout << options << "\n";
    return std::nullopt;
  }
  po::notify(command_line.values);
  return command_line;
}

void add_experiment_options(po::options_description& options, const std::string& section) {
  options.add_options()("config", po::value<std::string>(), "experiment file (JSON)")(
      "set", po::value<std::vector<std::string>>(),
      "FIELD=VALUE, any experiment field, e.g. --set workload.seed=3 (repeatable)");
  for (const auto& option : experiment_options()) {
    if (!section.empty() && std::string(option.path).rfind(section + ".", 0) != 0) continue;
    options.add_options()(option.name, po::value<std::string>(),
                          (std::string(option.help) + " [" + option.path + "]").c_str());
  }
}

ExperimentConfig experiment_from_options(const po::parsed_options& parsed,
                                         const std::vector<std::string>& defaults) {
  std::string config_file;
  std::vector<std::string> assignments;
  for (const auto& option : parsed.options) {
    if (option.value.empty()) continue;
    const std::string& value = option.value.front();
    if (option.string_key == "config") {
      config_file = value;
    } else if (option.string_key == "set") {
      assignments.push_back(value);
    } else {
      for (const auto& known : experiment_options()) {
        if (option.string_key == known.name)
          assignments.push_back(std::string(known.path) + "=" + value);
      }
    }
  }
  return resolve_experiment(config_file, assignments, defaults);
}

std::vector<std::string> experiment_options_given(const po::parsed_options& parsed) {
  std::vector<std::string> given;
  for (const auto& option : parsed.options) {
    const std::string& key = option.string_key;
    const bool named = std::any_of(experiment_options().begin(), experiment_options().end(),
                                   [&](const ExperimentOption& known) { return key == known.name; });
    if (named || key == "config" || key == "set") given.push_back(key);
  }
  return given;
}

int run_main(const char* program, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const po::error& error) {
    std::cerr << program << ": " << error.what() << " (see --help)\n";
    return 2;
  } catch (const ConfigError& error) {
    std::cerr << program << ": " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << program << ": " << error.what() << "\n";
    return 1;
  }
}

}  // namespace gnnbed
