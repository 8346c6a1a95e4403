// The shard reader (read_shard_manifest, then load_shard for every rank): one file of a shard set
// written by write_shards replaced by the input. The first byte chooses the layout (its low bit)
// and the file (the rest of it: the manifest or one rank's shard). A replaced shard's header is
// signed again in the manifest, as a conversion would sign it: otherwise the checksum would turn
// away nearly every mutated header before the checks behind it are reached.
#include <cstdio>
#include <map>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/small_dataset.hpp"
#include "workloads/section_file.hpp"
#include "workloads/shard_format.hpp"

namespace {

using FileSet = std::map<std::string, std::string>;  // name in the folder -> content

gnnbed::ShardLayout layout(std::size_t which) {
  gnnbed::ShardLayout layout;
  layout.num_shards = 2;
  layout.structure = which == 0 ? "replicated" : "partitioned";
  layout.features = which == 0 ? "rows" : "columns";
  return layout;
}

// Every file of the two layouts' shard sets, written once: rows of stored features, and columns of
// generated ones.
const std::vector<FileSet>& shard_sets() {
  static const std::vector<FileSet> sets = [] {
    std::vector<FileSet> written;
    for (std::size_t which = 0; which < 2; ++which) {
      const std::filesystem::path& folder = gnnbed::fuzz::Scratch::instance().fresh();
      gnnbed::write_shards(gnnbed::fuzz::small_generated_dataset(which == 0), layout(which),
                           folder);
      FileSet files;
      for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        files[entry.path().filename().string()] = gnnbed::fuzz::read_whole_file(entry.path());
      }
      written.push_back(std::move(files));
    }
    return written;
  }();
  return sets;
}

// The manifest with the header checksum of `file` (a shard whose bytes are `content`) made to
// match it; the manifest unchanged when the shard is shorter than a header or the manifest is not
// the one written.
std::string signed_manifest(const std::string& manifest, const std::string& file,
                            std::string_view content) {
  if (content.size() < gnnbed::kFileHeaderBytes) return manifest;
  nlohmann::json document = nlohmann::json::parse(manifest);
  const std::uint64_t checksum = gnnbed::shard_header_checksum(
      std::as_bytes(std::span(content.data(), gnnbed::kFileHeaderBytes)));
  char hex[19];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(checksum));
  for (auto& entry : document.at("shards")) {
    if (entry.at("file") == file) entry["header_fnv1a64"] = hex;
  }
  return document.dump(2);
}

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  std::vector<std::string> seeds;
  for (std::size_t which = 0; which < 2; ++which) {
    std::size_t index = 0;
    for (const auto& [name, content] : shard_sets()[which]) {
      seeds.push_back(make_file_set_input(2 * index + which, content));
      ++index;
    }
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gnnbed::fuzz;
  const FileSetInput input = split_file_set_input(data, size, 256);
  const FileSet& files = shard_sets()[input.file_index % 2];
  const std::size_t replaced = (input.file_index / 2) % files.size();
  Scratch& scratch = Scratch::instance();
  const std::filesystem::path& folder = scratch.fresh();
  const std::string replaced_name = std::next(files.begin(), static_cast<long>(replaced))->first;
  for (const auto& [name, content] : files) {
    if (name == replaced_name) {
      scratch.write(name, input.content);
    } else if (name == "manifest.json") {
      scratch.write(name, signed_manifest(content, replaced_name, input.content));
    } else {
      scratch.write(name, content);
    }
  }
  expect_only_gnnbed_errors([&] {
    const gnnbed::ShardManifest manifest = gnnbed::read_shard_manifest(folder);
    for (int rank = 0; rank < manifest.layout.num_shards; ++rank)
      gnnbed::load_shard(manifest, rank);
  });
  return 0;
}
