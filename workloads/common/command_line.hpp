#pragma once
// The command-line front end every gnnbed program shares: parsing with --help, an optional
// configuration file (--config) and `--set` assignments, named options that each set one field of
// the configuration (ConfigOption), and errors turned into one line and an exit code. Which fields
// there are is the caller's: the workload tool names the workload's (workload_options()), the
// programs that run experiments every experiment field (strategies/config/experiment_cli.hpp).
#include <boost/program_options.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workloads/common/json_config.hpp"

namespace gnnbed {

// A parsed command line: what the parser saw (in order) and the values by name.
struct CommandLine {
  boost::program_options::parsed_options parsed;
  boost::program_options::variables_map values;
};

// Parses argv against `options` (which should declare "help"), with optional positional names.
// With --help, prints the options to stdout and returns nothing: the program should exit 0.
std::optional<CommandLine> parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

// Adds --config, --set and one option per entry of `named` to `options`.
void add_config_options(boost::program_options::options_description& options,
                        std::span<const ConfigOption> named);

// Where the parsed options take the configuration from: the --config file (the last one given;
// empty for none), then the --set assignments and those of the `named` options, in command-line
// order, for resolve_config_document.
struct ConfigSources {
  std::string file;
  std::vector<std::string> assignments;
};
ConfigSources config_sources(const boost::program_options::parsed_options& parsed,
                             std::span<const ConfigOption> named);

// The configuration options given on the command line (--config, --set and the `named` ones), by
// name, in command-line order: for a mode that takes its configuration from elsewhere to refuse
// them.
std::vector<std::string> config_options_given(const boost::program_options::parsed_options& parsed,
                                              std::span<const ConfigOption> named);

// Runs `body` and turns every error into one line on stderr and a non-zero exit code:
// 2 for command-line and configuration errors, 1 for everything else.
int run_main(const char* program, int (*body)(int, char**), int argc, char** argv);

}  // namespace gnnbed
