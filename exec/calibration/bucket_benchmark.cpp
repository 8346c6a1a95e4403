// Calibration of train_bucket (bucket_benchmark.hpp).
#include "exec/calibration/bucket_benchmark.hpp"

#include <algorithm>
#include <string>

#include "exec/embedding/bucket_training.hpp"
#include "strategies/pbg.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"

namespace gnnbed {
namespace {

struct BucketShape {
  std::int64_t rows = 0;  // per partition
  std::int64_t edges = 0;
  int dimension = 0;
};

double median_seconds(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

CostSample time_shape(const BucketShape& shape, std::uint64_t seed) {
  std::vector<std::int32_t> members(static_cast<std::size_t>(shape.rows));
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<std::int32_t>(i);
  PartitionTable lhs = initial_partition_table(members, shape.dimension, 1e-3, seed);
  PartitionTable rhs = initial_partition_table(members, shape.dimension, 1e-3, seed + 1);
  Rng rng(hash_mix(seed, 2));
  std::vector<Triple> edges(static_cast<std::size_t>(shape.edges));
  for (Triple& edge : edges) {
    edge.source = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(shape.rows)));
    edge.target = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(shape.rows)));
  }
  const EmbeddingTrainingConfig training;  // PBG's batch and negatives
  BucketHyperparameters hyper;
  RelationParameters relations(Scoring::dot, 1, shape.dimension);
  std::vector<double> seconds;
  for (int run = 0; run < 4; ++run) {
    const Stopwatch clock;
    train_bucket(edges, lhs, rhs, relations, hyper, hash_mix(seed, 3, run));
    if (run > 0) seconds.push_back(clock.seconds());  // the first warms the caches
  }
  CostSample sample;
  sample.label = "train_bucket " + std::to_string(shape.edges) + " edges, " +
                 std::to_string(shape.rows) + " rows, dimension " + std::to_string(shape.dimension);
  sample.work.dense_flops = bucket_flops(shape.edges, shape.dimension, training);
  sample.seconds = median_seconds(seconds);
  return sample;
}

}  // namespace

void time_train_bucket(bool quick, std::uint64_t seed, std::vector<CostSample>& samples) {
  std::vector<BucketShape> shapes = {{4000, 4000, 32}, {4000, 16000, 100}};
  if (!quick) {
    shapes.push_back({20000, 40000, 64});
    shapes.push_back({50000, 100000, 100});
  }
  for (const BucketShape& shape : shapes) samples.push_back(time_shape(shape, seed));
}

}  // namespace gnnbed
