#include "exec/calibration/cluster_check.hpp"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// Adds `count` bytes of `in` from its current position to `crc`.
std::uint32_t add_bytes(std::ifstream& in, std::int64_t count, std::uint32_t crc,
                        const std::string& path) {
  std::vector<char> buffer(std::size_t{1} << 20);
  while (count > 0) {
    const auto chunk = static_cast<std::streamsize>(
        std::min<std::int64_t>(count, static_cast<std::int64_t>(buffer.size())));
    if (!in.read(buffer.data(), chunk)) throw Error(path + ": could not be read to its end");
    crc = static_cast<std::uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(chunk)));
    count -= chunk;
  }
  return crc;
}

}  // namespace

FileFingerprint fingerprint_file(const std::string& path) {
  FileFingerprint print;
  print.path = path;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return print;
  print.exists = true;
  print.bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, error));
  if (error) throw Error(path + ": " + error.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot be opened for reading");
  auto crc = static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0));
  if (print.bytes <= kWholeFileBytes) {
    print.crc32 = add_bytes(in, print.bytes, crc, path);
    return print;
  }
  print.sampled = true;
  crc = add_bytes(in, kSampleBytes, crc, path);
  in.seekg(print.bytes - kSampleBytes);
  print.crc32 = add_bytes(in, kSampleBytes, crc, path);
  return print;
}

nlohmann::json to_json(const RankView& view) {
  nlohmann::json files = nlohmann::json::array();
  for (const FileFingerprint& f : view.files) {
    files.push_back({{"path", f.path},
                     {"exists", f.exists},
                     {"bytes", f.bytes},
                     {"crc32", f.crc32},
                     {"sampled", f.sampled}});
  }
  return {{"rank", view.rank}, {"host", view.host}, {"files", files}};
}

RankView rank_view_from_json(const nlohmann::json& object) {
  RankView view{object.at("rank").get<int>(), object.at("host").get<std::string>(), {}};
  for (const nlohmann::json& f : object.at("files")) {
    view.files.push_back({f.at("path").get<std::string>(), f.at("exists").get<bool>(),
                          f.at("bytes").get<std::int64_t>(), f.at("crc32").get<std::uint32_t>(),
                          f.at("sampled").get<bool>()});
  }
  return view;
}

std::vector<std::string> file_differences(const std::vector<RankView>& views) {
  std::vector<std::string> lines;
  if (views.empty()) return lines;
  const RankView& first = views.front();
  for (std::size_t i = 0; i < first.files.size(); ++i) {
    const bool anywhere = std::any_of(views.begin(), views.end(), [i](const RankView& view) {
      return i < view.files.size() && view.files[i].exists;
    });
    if (!anywhere) lines.push_back(first.files[i].path + " does not exist on any rank");
  }
  for (const RankView& view : views) {
    for (std::size_t i = 0; i < view.files.size() && i < first.files.size(); ++i) {
      const FileFingerprint& mine = view.files[i];
      const FileFingerprint& theirs = first.files[i];
      if (mine.exists == theirs.exists && mine.bytes == theirs.bytes && mine.crc32 == theirs.crc32)
        continue;
      const std::string where =
          "rank " + std::to_string(view.rank) + " on " + view.host + ": " + mine.path + " ";
      if (!mine.exists || !theirs.exists) {
        lines.push_back(where + (mine.exists
                                     ? "exists, but not on rank 0 (" + first.host + ")"
                                     : "does not exist (rank 0 on " + first.host + " has it)"));
      } else if (mine.bytes != theirs.bytes) {
        lines.push_back(where + "has " + std::to_string(mine.bytes) + " bytes, rank 0's " +
                        std::to_string(theirs.bytes));
      } else {
        lines.push_back(where + "differs from rank 0's in its contents (CRC-32)");
      }
    }
  }
  return lines;
}

std::vector<std::pair<int, int>> pairs_to_time(const std::vector<std::string>& host_of_rank,
                                               bool per_host) {
  std::vector<int> ranks;
  std::map<std::string, int> first_of_host;
  for (int r = 0; r < static_cast<int>(host_of_rank.size()); ++r) {
    const bool first = first_of_host.emplace(host_of_rank[static_cast<std::size_t>(r)], r).second;
    if (first || !per_host) ranks.push_back(r);
  }
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (std::size_t j = i + 1; j < ranks.size(); ++j) pairs.emplace_back(ranks[i], ranks[j]);
  }
  return pairs;
}

}  // namespace gnnbed
