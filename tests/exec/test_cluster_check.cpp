// cluster_check: files compared by what they hold (size and CRC-32, large ones by their ends), the
// differences named by rank, host and path, the pairs it times, and the tool end to end under
// mpiexec (the same files on every rank, every pair of ranks timed, the result file written).
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>

#include "exec/calibration/cluster_check.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

void write(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

TEST(FileFingerprint, IsTheSizeAndTheCrcOfWhatTheFileHolds) {
  const TemporaryDirectory dir;
  write(dir.path() / "a", "graph data");
  const FileFingerprint print = fingerprint_file((dir.path() / "a").string());
  EXPECT_TRUE(print.exists);
  EXPECT_EQ(print.bytes, 10);
  const std::string text = "graph data";
  EXPECT_EQ(print.crc32, crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(text.data()),
                               static_cast<uInt>(text.size())));
  EXPECT_FALSE(print.sampled);
  EXPECT_FALSE(fingerprint_file((dir.path() / "missing").string()).exists);
  EXPECT_FALSE(fingerprint_file(dir.path().string()).exists) << "a folder is not a file";
}

TEST(FileFingerprint, OfALargeFileIsItsSizeAndItsEnds) {
  const TemporaryDirectory dir;
  const auto path = dir.path() / "large";
  const std::int64_t bytes = kWholeFileBytes + 1;
  {
    std::ofstream out(path, std::ios::binary);  // sparse: zeros but for the last byte
    out.seekp(bytes - 1);
    out.put('x');
  }
  const FileFingerprint before = fingerprint_file(path.string());
  EXPECT_TRUE(before.sampled);
  EXPECT_EQ(before.bytes, bytes);
  {
    std::fstream edit(path, std::ios::binary | std::ios::in | std::ios::out);
    edit.seekp(bytes / 2);  // between the two ends: not read
    edit.put('y');
  }
  EXPECT_EQ(fingerprint_file(path.string()).crc32, before.crc32);
  {
    std::fstream edit(path, std::ios::binary | std::ios::in | std::ios::out);
    edit.seekp(bytes - 2);
    edit.put('z');
  }
  EXPECT_NE(fingerprint_file(path.string()).crc32, before.crc32);
}

TEST(FileDifferences, NameTheRankTheHostAndTheFile) {
  const FileFingerprint tool{"/opt/gnnbed/run_experiment", true, 100, 7, false};
  const FileFingerprint data{"/data/products.bin", true, 5000, 9, false};
  const FileFingerprint config{"/data/config.json", false, 0, 0, false};
  RankView first{0, "node0", {tool, data, config}};
  RankView same_elsewhere{1, "node1", {tool, data, config}};
  same_elsewhere.files[0].path = "/home/me/gnnbed/run_experiment";  // where does not matter
  EXPECT_EQ(file_differences({first, same_elsewhere}),
            std::vector<std::string>{"/data/config.json does not exist on any rank"});

  RankView other{2, "node2", {tool, data, config}};
  other.files[0].crc32 = 8;
  other.files[1].bytes = 4000;
  other.files[2].exists = true;
  const std::vector<std::string> lines = file_differences({first, same_elsewhere, other});
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0],
            "rank 2 on node2: /opt/gnnbed/run_experiment differs from rank 0's in its "
            "contents (CRC-32)");
  EXPECT_EQ(lines[1], "rank 2 on node2: /data/products.bin has 4000 bytes, rank 0's 5000");
  EXPECT_EQ(lines[2], "rank 2 on node2: /data/config.json exists, but not on rank 0 (node0)");
  EXPECT_EQ(rank_view_from_json(to_json(other)).files, other.files);
}

TEST(PairsToTime, OnePerPairOfHostsOrEveryPairOfRanks) {
  const std::vector<std::string> hosts = {"a", "a", "b", "c"};
  EXPECT_EQ(pairs_to_time(hosts, true), (std::vector<std::pair<int, int>>{{0, 2}, {0, 3}, {2, 3}}));
  EXPECT_EQ(pairs_to_time(hosts, false).size(), 6U);
  EXPECT_TRUE(pairs_to_time({"a", "a"}, true).empty());
}

TEST(ClusterCheck, UnderMpiexecComparesTheFilesAndTimesEveryPair) {
  const TemporaryDirectory dir;
  write(dir.path() / "data", "the same on every rank");
  const auto result = dir.path() / "check.json";
  const std::string command =
      std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") + GNNBED_MPIEXEC +
      " --oversubscribe -n 3 " + testing::binary_path("exec/cluster_check") +
      " --pairs ranks --bytes 65536 --path " + (dir.path() / "data").string() + " --output " +
      result.string();
  const testing::CommandResult run = testing::run_command(command);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("every rank sees the same files"), std::string::npos) << run.output;
  std::ifstream in(result);
  const nlohmann::json document = nlohmann::json::parse(in);
  EXPECT_EQ(document["ranks"].size(), 3U);
  EXPECT_EQ(document["ranks"][0]["files"].size(), 2U) << "the tool itself and the data";
  ASSERT_EQ(document["pairs"].size(), 3U);
  for (const auto& pair : document["pairs"]) {
    EXPECT_GT(pair["latency_seconds"].get<double>(), 0);
    EXPECT_GT(pair["bandwidth_bytes_per_second"].get<double>(), 0);
  }
  const testing::CommandResult missing = testing::run_command(
      std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") + GNNBED_MPIEXEC +
      " --oversubscribe -n 2 " + testing::binary_path("exec/cluster_check") + " --path " +
      (dir.path() / "absent").string() + " --output " + result.string());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("does not exist on any rank"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace gnnbed
