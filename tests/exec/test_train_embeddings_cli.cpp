// The `train_embeddings` program end to end: a short run writes a complete result; bad values and
// bad files give one clear line, a non-zero exit, and no result file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

std::string train_embeddings() { return testing::binary_path("exec/train_embeddings"); }

TEST(TrainEmbeddingsCli, ShortRunWritesResultWithMetricsProvenanceAndConfig) {
  const TemporaryDirectory dir;
  const auto output = dir.path() / "out" / "cora.json";
  const CommandResult run = run_command(
      train_embeddings() + " --dataset cora --epochs 2 --dimension 16 --partitions 2" +
      " --swap-dir " + (dir.path() / "swap").string() + " --quiet -o " + output.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("filtered: MRR"), std::string::npos) << run.output;
  std::ifstream in(output);
  const nlohmann::json result = nlohmann::json::parse(in);
  for (const char* key :
       {"epochs", "test", "epoch_seconds", "swaps", "config", "provenance", "dataset"}) {
    EXPECT_TRUE(result.contains(key)) << key;
  }
  EXPECT_EQ(result["epochs"].size(), 2u);
  EXPECT_EQ(result["config"]["training"]["partitions"], 2);
  EXPECT_EQ(result["dataset"]["entities"], 2708);
  EXPECT_GT(result["test"]["filtered"]["mrr"].get<double>(), 0.0);
  EXPECT_GT(result["swaps"]["bytes_written"].get<std::int64_t>(), 0);
}

TEST(TrainEmbeddingsCli, BadValuesAndFilesAreNamedAndWriteNothing) {
  const TemporaryDirectory dir;
  const auto output = dir.path() / "result.json";
  const auto bad_triples = dir.write("kg.tsv", "a\tr\tb\nc\tr\n");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--scoring cosine", "model.scoring"},
      {"--partitions 0", "training.partitions"},
      {"--bucket-order spiral", "training.bucket_order"},
      {"--partitions 3000", "training.partitions"},
      {"--dataset " + bad_triples.string() + " --format triples", "kg.tsv:2"},
      {"--dataset /no/such/file.txt", "/no/such/file.txt"},
      {"--set model.colour=red", "model.colour"}};
  for (const auto& [options, named] : cases) {
    const CommandResult run =
        run_command(train_embeddings() + " --epochs 1 -q " + options + " -o " + output.string());
    EXPECT_NE(run.exit_code, 0) << options;
    EXPECT_NE(run.output.find(named), std::string::npos) << options << ": " << run.output;
    EXPECT_FALSE(std::filesystem::exists(output)) << options;
  }
}

}  // namespace
}  // namespace gnnbed
