// The `train` program end to end: a short run writes a complete result; bad options, bad values
// and bad files give one clear line, a non-zero exit, and no result file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace gnnbed {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TemporaryDirectory;

std::string train() { return testing::binary_path("exec/train"); }

TEST(TrainCli, ShortRunWritesResultWithProvenanceAndConfig) {
  const TemporaryDirectory dir;
  const auto output = dir.path() / "out" / "cora.json";
  const CommandResult run = run_command(
      train() + " --workload cora --epochs 3 --hidden 8 --quiet --output " + output.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("test accuracy"), std::string::npos) << run.output;
  std::ifstream in(output);
  const nlohmann::json result = nlohmann::json::parse(in);
  for (const char* key : {"test_accuracy", "val_accuracy", "epoch_seconds", "config", "provenance",
                          "dataset", "epochs", "peak_memory_bytes"}) {
    EXPECT_TRUE(result.contains(key)) << key;
  }
  EXPECT_EQ(result["config"]["model"]["hidden"], 8);
  EXPECT_EQ(result["config"]["training"]["epochs"], 3);
  EXPECT_EQ(result["epochs"].size(), 3u);
  EXPECT_EQ(result["dataset"]["num_nodes"], 2708);
  EXPECT_NE(result["provenance"]["command"].get<std::string>().find("--hidden 8"),
            std::string::npos);
  EXPECT_FALSE(result["provenance"]["git_revision"].get<std::string>().empty());
}

TEST(TrainCli, ConfigFileIsReadAndCommandLineOverridesIt) {
  const TemporaryDirectory dir;
  const auto config = dir.write("experiment.json", R"({"model": {"kind": "sage", "hidden": 4},
    "training": {"epochs": 2, "batch_size": 50, "fanouts": [5, 5]}})");
  const auto output = dir.path() / "r.json";
  const CommandResult run = run_command(train() + " --config " + config.string() +
                                        " --hidden 6 --quiet --output " + output.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(output);
  const nlohmann::json result = nlohmann::json::parse(in);
  EXPECT_EQ(result["config"]["model"]["kind"], "sage");
  EXPECT_EQ(result["config"]["model"]["hidden"], 6);
  EXPECT_EQ(result["config"]["training"]["batch_size"], 50);
}

struct BadInvocation {
  const char* name;
  std::string arguments;  // {dir} is replaced by a temporary directory
  int exit_code;
  std::vector<std::string> message_parts;
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const BadInvocation& invocation, std::ostream* out) { *out << invocation.name; }

// Outputs are checked before any work, and a refused one creates nothing (not even a folder).
TEST(TrainCli, OutputsThatCannotBeWrittenAreRefusedFirst) {
  const TemporaryDirectory dir;
  const std::string outputs[] = {(dir.path() / "newdir/").string(), "/dev/null",
                                 dir.path().string()};
  for (const std::string& output : outputs) {
    const CommandResult run =
        run_command(train() + " --workload cora --epochs 1 --quiet --output " + output);
    EXPECT_EQ(run.exit_code, 2) << output << ": " << run.output;
    EXPECT_NE(run.output.find("'--output': cannot write"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("loaded"), std::string::npos) << "checked before loading";
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "newdir"));
}

class TrainCliRejects : public ::testing::TestWithParam<BadInvocation> {};

TEST_P(TrainCliRejects, WithOneClearLineAndNoResult) {
  const BadInvocation& bad = GetParam();
  const TemporaryDirectory dir;
  dir.write("broken.json", "{\"model\": {\"hidden\": 16,}\n}");
  dir.write("unknown.json", "{\"model\": {\"hiden\": 16}}");
  std::string arguments = bad.arguments;
  for (std::size_t at = arguments.find("{dir}"); at != std::string::npos;
       at = arguments.find("{dir}")) {
    arguments.replace(at, 5, dir.path().string());
  }
  const auto output = dir.path() / "result.json";
  const CommandResult run = run_command(train() + " " + arguments + " --output " + output.string());
  EXPECT_EQ(run.exit_code, bad.exit_code) << run.output;
  for (const auto& part : bad.message_parts) {
    EXPECT_NE(run.output.find(part), std::string::npos)
        << "expected '" << part << "' in: " << run.output;
  }
  EXPECT_FALSE(std::filesystem::exists(output)) << "a failed run must not leave a result";
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, TrainCliRejects,
    ::testing::Values(
        BadInvocation{"unknown_option", "--hiddn 3", 2, {"unrecognised option", "--hiddn"}},
        BadInvocation{"non_numeric_value", "--hidden abc", 2, {"model.hidden", "integer"}},
        BadInvocation{"out_of_range_value", "--dropout 1.5", 2, {"model.dropout"}},
        BadInvocation{"unknown_model", "--model gin", 2, {"model.kind", "gin"}},
        BadInvocation{
            "unknown_workload", "--workload corra", 2, {"workload.source", "corra", "cora"}},
        BadInvocation{"fanouts_do_not_fit_layers",
                      "--batch-size 10 --fanouts 5,5,5 --epochs 1",
                      2,
                      {"training.fanouts", "3 entries", "2 layers"}},
        BadInvocation{"malformed_config_file",
                      "--config {dir}/broken.json",
                      1,
                      {"broken.json:1", "invalid JSON"}},
        BadInvocation{"unknown_config_field",
                      "--config {dir}/unknown.json",
                      2,
                      {"model.hiden", "unknown field"}},
        BadInvocation{
            "missing_config_file", "--config {dir}/absent.json", 1, {"absent.json", "cannot open"}},
        BadInvocation{"config_is_a_folder", "--config {dir}", 1, {"is a folder, not a JSON file"}},
        BadInvocation{"missing_dataset_directory",
                      "--workload planetoid-tsv --path {dir}/nowhere",
                      1,
                      {"nowhere"}},
        BadInvocation{"diverged_training",
                      "--workload cora --lr 1e30 --epochs 5 --quiet",
                      1,
                      {"training diverged", "epoch 2", "training.stop_on_divergence"}}),
    [](const ::testing::TestParamInfo<BadInvocation>& param_info) {
      return std::string(param_info.param.name);
    });

}  // namespace
}  // namespace gnnbed
