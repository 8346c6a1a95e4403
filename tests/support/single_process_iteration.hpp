#pragma once
// The check every distributed-execution test makes: one iteration on every rank against the
// single-process reference (tests/mpi/test_distributed.cpp runs it on the CPU over MPI,
// tests/mpi/test_gpu_distributed.cpp on CUDA over MPI and NCCL).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/distributed/rank_engine.hpp"
#include "exec/nn/model.hpp"
#include "exec/train/minibatch_step.hpp"
#include "exec/train/optimizer.hpp"
#include "exec/train/trainer.hpp"
#include "tests/support/reference_step.hpp"

namespace gnnbed::testing {

// One iteration of `config` on every rank, its compute on `backend`, gives the single-process
// loss, gradients and updated weights (the reference runs on the CPU), and the transport moves
// exactly the plan's bytes.
inline void expect_single_process_iteration(const ExperimentConfig& config, const Dataset& dataset,
                                            Transport& transport, ComputeBackend& backend) {
  const std::string& strategy = config.distribution.strategy;
  const StrategyContext context = make_strategy_context(config, dataset, transport.size());
  RankEngine engine(config, context, dataset, transport, backend);
  const TrafficBytes sent_before = transport.bytes_sent();
  const TrafficBytes received_before = transport.bytes_received();
  const Stopwatch clock;
  // An iteration in the middle of an epoch, so that every rank has seeds (Cora has 140).
  const int epoch = 1;
  const int iteration = 1;
  const IterationRun run = engine.run_iteration(epoch, iteration, clock);

  const TrafficBytes sent = transport.bytes_sent() - sent_before;
  const TrafficBytes received = transport.bytes_received() - received_before;
  EXPECT_EQ(sent, run.plan.bytes_sent()) << "bytes sent: transport vs plan";
  EXPECT_EQ(received, run.plan.bytes_received()) << "bytes received: transport vs plan";
  if (strategy == "p3") {
    EXPECT_EQ(sent[Traffic::features], 0);
  }

  const double loss = transport.sum_over_ranks(run.outcome.loss);
  // The plan ended with the optimizer step: gradients (with weight decay added) and new weights.
  const std::vector<Parameter> gradients = engine.executor().gather_full_parameters(true);
  const std::vector<Parameter> weights = engine.executor().gather_full_parameters(false);

  // The reference: one process, the initial weights, every rank's mini-batch in turn.
  const ModelSpec& spec = context.model;
  Model reference(spec, model_seed(config.training));
  reference.zero_grad();
  const NeighborSampler sampler(dataset.graph, config.training.fanouts,
                                sampler_seed(config.training));
  // Every rank's seeds: the engine's schedule lists its own rank's only.
  const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                               config.training.seed);
  const double scale = 1.0 / static_cast<double>(schedule.seeds_in_iteration(epoch, iteration));
  double reference_loss = 0;
  for (int r = 0; r < transport.size(); ++r) {
    const MiniBatch batch =
        sampler.sample(schedule.seeds(r, epoch, iteration), schedule.batch_key(epoch, iteration));
    reference_loss += accumulate_gradients(reference, *dataset.features, dataset.labels.span(),
                                           batch, scale, schedule.dropout_key(epoch, iteration))
                          .loss;
  }
  EXPECT_NEAR(loss, reference_loss, 1e-5 * std::abs(reference_loss));
  expect_same_step(gradients, weights, reference.parameters(), config.training);
}

}  // namespace gnnbed::testing
