#pragma once
// The command-line front end shared by gnnbed's programs: an optional experiment file, `--set`
// assignments, and one named option per common field (see experiment_options()), all resolved
// into an ExperimentConfig.
#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strategies/config/experiment_config.hpp"

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

// Adds --config, --set and the named experiment options to `options`; with a non-empty
// `section` ("workload"), only the options of that part of the experiment.
void add_experiment_options(boost::program_options::options_description& options,
                            const std::string& section = "");

// The experiment the parsed options describe: the program's `defaults` (assignments like
// "model.kind=sage"), then the --config file, then named options and --set assignments in
// command-line order.
ExperimentConfig experiment_from_options(const boost::program_options::parsed_options& parsed,
                                         const std::vector<std::string>& defaults = {});

// The experiment options given on the command line (--config, --set and the named ones), by
// name, in command-line order: for a mode that takes its experiment from elsewhere to refuse them.
std::vector<std::string> experiment_options_given(
    const boost::program_options::parsed_options& parsed);

// Runs `body` and turns every error into one line on stderr and a non-zero exit code:
// 2 for command-line and configuration errors, 1 for everything else.
int run_main(const char* program, int (*body)(int, char**), int argc, char** argv);

}  // namespace gnnbed
