#pragma once
// The field an experiment assignment ("distribution.cache=graph") is refused for when the
// experiment is read, or "(accepted)".
#include <string>

#include "strategies/config/experiment_config.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed::testing {

inline std::string refused_field(const std::string& assignment) {
  try {
    resolve_experiment("", {assignment});
  } catch (const ConfigError& error) {
    return error.field();
  }
  return "(accepted)";
}

}  // namespace gnnbed::testing
