#pragma once
// How run_experiment's ranks agree that they can start: each prepares on its own (command line,
// configuration, workload), and no rank enters the run's collectives unless every rank prepared.
#include <functional>
#include <optional>
#include <string>

#include "exec/mpi/mpi_transport.hpp"

namespace gnnbed {

// Runs `prepare`; what stopped it, or "" when nothing did. `exit_code` is set for a problem: 2 for
// the command line and the configuration (ConfigError), 1 for anything else.
std::string setup_problem(const std::function<void()>& prepare, int& exit_code);

// Agrees before any data-plane traffic: if one rank failed to set up, every rank stops with the
// same code, and rank 0 says why (the first failed rank's problem). Collective.
std::optional<int> setup_failure_code(MpiTransport& transport, const std::string& problem,
                                      int exit_code);

}  // namespace gnnbed
