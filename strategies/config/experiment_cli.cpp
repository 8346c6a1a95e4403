#include "strategies/config/experiment_cli.hpp"

namespace gnnbed {

namespace po = boost::program_options;

void add_experiment_options(po::options_description& options) {
  add_config_options(options, experiment_options());
}

ExperimentConfig experiment_from_options(const po::parsed_options& parsed,
                                         const std::vector<std::string>& defaults) {
  const ConfigSources sources = config_sources(parsed, experiment_options());
  return resolve_experiment(sources.file, sources.assignments, defaults);
}

std::vector<std::string> experiment_options_given(const po::parsed_options& parsed) {
  return config_options_given(parsed, experiment_options());
}

}  // namespace gnnbed
