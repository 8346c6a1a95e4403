#pragma once
// Before a run on several machines (cluster_check, docs/cluster.md): does every rank see the same
// binaries and data, and what does the network between the machines give? Files are compared by
// size and a CRC-32 of their contents; pairs of ranks are timed with calibrate's ping-pong.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnnbed {

// What one rank sees of a file.
struct FileFingerprint {
  std::string path;
  bool exists = false;
  std::int64_t bytes = 0;
  std::uint32_t crc32 = 0;
  // Files over kWholeFileBytes are fingerprinted by their size and their first and last
  // kSampleBytes, not read whole: a data file of hundreds of GB would take minutes per host.
  bool sampled = false;

  bool operator==(const FileFingerprint&) const = default;
};
inline constexpr std::int64_t kWholeFileBytes = std::int64_t{256} << 20;
inline constexpr std::int64_t kSampleBytes = std::int64_t{16} << 20;

// Error (naming the path) for a file that exists but cannot be read; a missing file is reported
// as not existing.
FileFingerprint fingerprint_file(const std::string& path);

// What one rank reports: where it runs and what it sees.
struct RankView {
  int rank = 0;
  std::string host;
  std::vector<FileFingerprint> files;
};
nlohmann::json to_json(const RankView& view);
RankView rank_view_from_json(const nlohmann::json& object);

// One line per file a rank sees otherwise than rank 0 (absent, another size, other contents),
// naming the rank, its host and the file, and per file no rank sees; empty when every rank sees
// the same files. Where a file is does not matter (a tool's path may differ between hosts), only
// what it holds.
std::vector<std::string> file_differences(const std::vector<RankView>& views);

// The pairs of ranks to time: every pair, or (`per_host`) one per pair of hosts, between the
// lowest rank of each; in increasing order.
std::vector<std::pair<int, int>> pairs_to_time(const std::vector<std::string>& host_of_rank,
                                               bool per_host);

}  // namespace gnnbed
