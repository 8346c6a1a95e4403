#include "workloads/common/command_line.hpp"

#include <algorithm>
#include <iostream>

#include "workloads/common/errors.hpp"

namespace gnnbed {

namespace po = boost::program_options;

namespace {

bool is_named(const std::string& key, std::span<const ConfigOption> named) {
  return std::any_of(named.begin(), named.end(),
                     [&](const ConfigOption& known) { return key == known.name; });
}

}  // namespace

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

void add_config_options(po::options_description& options, std::span<const ConfigOption> named) {
  options.add_options()("config", po::value<std::string>(), "experiment file (JSON)")(
      "set", po::value<std::vector<std::string>>(),
      "FIELD=VALUE, any experiment field, e.g. --set workload.seed=3 (repeatable)");
  for (const ConfigOption& option : named) {
    options.add_options()(option.name, po::value<std::string>(),
                          (std::string(option.help) + " [" + option.path + "]").c_str());
  }
}

ConfigSources config_sources(const po::parsed_options& parsed,
                             std::span<const ConfigOption> named) {
  ConfigSources sources;
  for (const auto& option : parsed.options) {
    if (option.value.empty()) continue;
    const std::string& value = option.value.front();
    if (option.string_key == "config") {
      sources.file = value;
    } else if (option.string_key == "set") {
      sources.assignments.push_back(value);
    } else {
      for (const ConfigOption& known : named) {
        if (option.string_key == known.name)
          sources.assignments.push_back(std::string(known.path) + "=" + value);
      }
    }
  }
  return sources;
}

std::vector<std::string> config_options_given(const po::parsed_options& parsed,
                                              std::span<const ConfigOption> named) {
  std::vector<std::string> given;
  for (const auto& option : parsed.options) {
    const std::string& key = option.string_key;
    if (is_named(key, named) || key == "config" || key == "set") given.push_back(key);
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
