#pragma once
// simulate --strategy pbg: PyTorch-BigGraph's distributed epoch replayed on a modelled cluster
// (one rank per trainer), from the same plans run_experiment --strategy pbg runs.

namespace gnnbed {

// One epoch of one configuration in this process (its one SimGrid engine); the exit code.
int simulate_pbg(int argc, char** argv);

}  // namespace gnnbed
