#pragma once
// The command-line front end of the programs that run experiments: the shared one
// (workloads/common/command_line.hpp: parse_command_line, run_main) with an optional experiment
// file, `--set` assignments, and one named option per common field (see experiment_options()),
// all resolved into an ExperimentConfig.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "strategies/config/experiment_config.hpp"
#include "workloads/common/command_line.hpp"

namespace gnnbed {

// Adds --config, --set and the named experiment options to `options`.
void add_experiment_options(boost::program_options::options_description& options);

// The experiment the parsed options describe: the program's `defaults` (assignments like
// "model.kind=sage"), then the --config file, then named options and --set assignments in
// command-line order.
ExperimentConfig experiment_from_options(const boost::program_options::parsed_options& parsed,
                                         const std::vector<std::string>& defaults = {});

// The experiment options given on the command line (--config, --set and the named ones), by
// name, in command-line order: for a mode that takes its experiment from elsewhere to refuse them.
std::vector<std::string> experiment_options_given(
    const boost::program_options::parsed_options& parsed);

}  // namespace gnnbed
