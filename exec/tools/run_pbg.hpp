#pragma once
// run_experiment --strategy pbg: PyTorch-BigGraph's distributed embedding training over MPI
// (exec/embedding/distributed_embeddings.hpp), with train_embeddings' options.
#include "exec/mpi/mpi_transport.hpp"

namespace gnnbed {

// Runs it on every rank (collective); the process's exit code.
int run_pbg_experiment(int argc, char** argv, MpiTransport& transport);

}  // namespace gnnbed
