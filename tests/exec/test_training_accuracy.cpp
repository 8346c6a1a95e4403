// Published accuracy, reproduced: Kipf & Welling's GCN settings on the Planetoid splits of Cora
// (81.5 %) and Citeseer (70.3 %), mean test accuracy over 5 seeds within 1.5 points; mini-batch
// GraphSAGE (fanouts 25,10) on Cora at least 78 %; and a generated CSBM graph is learnable.
#include <gtest/gtest.h>

#include <numeric>

#include "exec/train/trainer.hpp"
#include "tests/support/bundled_workload.hpp"
#include "workloads/workload_config.hpp"

namespace gnnbed {
namespace {

double mean_test_accuracy(const Dataset& dataset, const ModelConfig& model, TrainingConfig training,
                          int seeds) {
  const ModelSpec spec(model, dataset.feature_dim(), dataset.num_classes);
  double sum = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    training.seed = static_cast<std::uint64_t>(seed);
    const TrainingReport report = train_model(dataset, spec, training);
    std::printf("  seed %d: test accuracy %.2f %%, validation %.2f %%\n", seed,
                100 * report.test_accuracy, 100 * report.val_accuracy);
    sum += report.test_accuracy;
  }
  return sum / seeds;
}

Dataset bundled(const std::string& name) {
  WorkloadConfig config;
  config.source = name;
  return load_workload(config);
}

// Kipf & Welling (ICLR 2017): 2 layers, hidden 16, dropout 0.5, weight decay 5e-4, Adam lr 0.01,
// 200 epochs, row-normalised features (the workload's "auto" normalisation for Planetoid data).
ModelConfig kipf_model() { return ModelConfig{"gcn", 2, 16, 0.5}; }
TrainingConfig kipf_training() {
  TrainingConfig training;
  training.epochs = 200;
  training.learning_rate = 0.01;
  training.weight_decay = 5e-4;
  training.eval_every = 0;
  return training;
}

TEST(PublishedAccuracy, GcnOnCoraWithinOnePointFiveOf81Point5) {
  const double accuracy = mean_test_accuracy(bundled("cora"), kipf_model(), kipf_training(), 5);
  std::printf("Cora GCN mean test accuracy over 5 seeds: %.2f %% (published 81.5 %%)\n",
              100 * accuracy);
  EXPECT_NEAR(100 * accuracy, 81.5, 1.5);
}

TEST(PublishedAccuracy, GcnOnCiteseerWithinOnePointFiveOf70Point3) {
  const double accuracy = mean_test_accuracy(bundled("citeseer"), kipf_model(), kipf_training(), 5);
  std::printf("Citeseer GCN mean test accuracy over 5 seeds: %.2f %% (published 70.3 %%)\n",
              100 * accuracy);
  EXPECT_NEAR(100 * accuracy, 70.3, 1.5);
}

TEST(PublishedAccuracy, MiniBatchGraphSageOnCoraReaches78) {
  TrainingConfig training = kipf_training();
  training.batch_size = 32;
  training.fanouts = {25, 10};
  training.epochs = 50;
  const double accuracy =
      mean_test_accuracy(bundled("cora"), ModelConfig{"sage", 2, 16, 0.5}, training, 5);
  std::printf("Cora mini-batch GraphSAGE mean test accuracy over 5 seeds: %.2f %%\n",
              100 * accuracy);
  EXPECT_GE(100 * accuracy, 78.0);
}

TEST(GeneratedWorkload, CsbmIsLearnableWellAboveChance) {
  const Dataset dataset = load_workload(testing::learnable_csbm_config());
  TrainingConfig training = kipf_training();
  training.epochs = 100;
  const double accuracy = mean_test_accuracy(dataset, ModelConfig{"sage", 2, 32, 0.5}, training, 1);
  std::printf("CSBM (4 classes, chance 25 %%) test accuracy: %.2f %%\n", 100 * accuracy);
  EXPECT_GE(accuracy, 0.6);
}

}  // namespace
}  // namespace gnnbed
