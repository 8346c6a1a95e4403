// Published accuracy, reproduced: Kipf & Welling's GCN settings on the Planetoid splits of Cora
// (81.5 %) and Citeseer (70.3 %), mean test accuracy over 5 seeds within 1.5 points; Wu et al.'s
// SGC on the same splits (81.0 %, 71.9 %) within 1 point; GAT on Cora (83.0 %) within 1.5 points;
// mini-batch GraphSAGE (fanouts 25,10) on Cora at least 78 %; and a generated CSBM graph is
// learnable.
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
TrainingConfig full_batch_training(int epochs, double learning_rate, double weight_decay) {
  TrainingConfig training;
  training.epochs = epochs;
  training.learning_rate = learning_rate;
  training.weight_decay = weight_decay;
  training.eval_every = 0;
  return training;
}
TrainingConfig kipf_training() { return full_batch_training(200, 0.01, 5e-4); }

// The mean test accuracy over `seeds` seeds lies within `tolerance` points of the `published` one.
void expect_published_accuracy(const std::string& dataset, const ModelConfig& model,
                               const TrainingConfig& training, int seeds, double published,
                               double tolerance) {
  const double accuracy = mean_test_accuracy(bundled(dataset), model, training, seeds);
  std::printf("%s %s mean test accuracy over %d seeds: %.2f %% (published %.1f %%)\n",
              dataset.c_str(), model.kind.c_str(), seeds, 100 * accuracy, published);
  EXPECT_NEAR(100 * accuracy, published, tolerance);
}

TEST(PublishedAccuracy, GcnOnCoraWithinOnePointFiveOf81Point5) {
  expect_published_accuracy("cora", kipf_model(), kipf_training(), 5, 81.5, 1.5);
}

TEST(PublishedAccuracy, GcnOnCiteseerWithinOnePointFiveOf70Point3) {
  expect_published_accuracy("citeseer", kipf_model(), kipf_training(), 5, 70.3, 1.5);
}

// Wu et al. (ICML 2019), Table 2: SGC with K = 2 propagations, Adam lr 0.2, 100 epochs, full batch,
// no dropout, weight decay tuned on the validation set. Here one weight decay serves both graphs:
// 5e-5, the best validation accuracy of {1e-5, 5e-5, 1e-4} on each (tied with 1e-5 on Cora, with
// 1e-4 on Citeseer). The seed only draws the initial weights, so 3 seeds suffice.
ModelConfig sgc_model() { return ModelConfig{"sgc", 2, 16, 0.0}; }
TrainingConfig sgc_training() { return full_batch_training(100, 0.2, 5e-5); }

TEST(PublishedAccuracy, SgcOnCoraWithinOnePointOf81) {
  expect_published_accuracy("cora", sgc_model(), sgc_training(), 3, 81.0, 1.0);
}

TEST(PublishedAccuracy, SgcOnCiteseerWithinOnePointOf71Point9) {
  expect_published_accuracy("citeseer", sgc_model(), sgc_training(), 3, 71.9, 1.0);
}

// Velickovic et al. (ICLR 2018): 8 heads of 8 hidden units, one output head, dropout 0.6, Adam lr
// 0.005, weight decay 5e-4. Two differences: ReLU between the layers instead of ELU, and no dropout
// on the attention coefficients; 200 epochs instead of early stopping with a patience of 100.
TEST(PublishedAccuracy, GatOnCoraWithinOnePointFiveOf83) {
  ModelConfig gat{"gat", 2, 8, 0.6};
  gat.heads = 8;
  expect_published_accuracy("cora", gat, full_batch_training(200, 0.005, 5e-4), 5, 83.0, 1.5);
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
