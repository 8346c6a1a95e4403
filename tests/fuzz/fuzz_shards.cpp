// The shard reader (read_shard_manifest, then load_shard for every rank): one file of a shard set
// written by write_shards replaced by the input. The first byte chooses the layout (its low bit)
// and the file (the rest of it: the manifest or one rank's shard). A replaced shard's header is
// signed again in the manifest, as a conversion would sign it: otherwise the checksum would turn
// away nearly every mutated header before the checks behind it are reached.
#include <map>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/small_dataset.hpp"
#include "workloads/section_file.hpp"
#include "workloads/shard_format.hpp"

namespace {

using FileSet = std::map<std::string, std::string>;  // name in the folder -> content

// A written shard set: its files, and the manifest write_shards returned.
struct ShardSet {
  FileSet files;
  gnnbed::ShardManifest manifest;
};

gnnbed::ShardLayout layout(std::size_t which) {
  gnnbed::ShardLayout layout;
  layout.num_shards = 2;
  layout.structure = which == 0 ? "replicated" : "partitioned";
  layout.features = which == 0 ? "rows" : "columns";
  return layout;
}

// Every file of the two layouts' shard sets, written once: rows of stored features, and columns of
// generated ones.
const std::vector<ShardSet>& shard_sets() {
  static const std::vector<ShardSet> sets = [] {
    std::vector<ShardSet> written;
    for (std::size_t which = 0; which < 2; ++which) {
      const std::filesystem::path& folder = gnnbed::fuzz::Scratch::instance().fresh();
      ShardSet set;
      set.manifest = gnnbed::write_shards(gnnbed::fuzz::small_generated_dataset(which == 0),
                                          layout(which), folder);
      for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        set.files[entry.path().filename().string()] = gnnbed::fuzz::read_whole_file(entry.path());
      }
      written.push_back(std::move(set));
    }
    return written;
  }();
  return sets;
}

// The set's manifest with the header checksum of shard file `file` (whose bytes are `content`)
// made to match it; unchanged when the shard is shorter than a header.
std::string signed_manifest(const ShardSet& set, const std::string& file,
                            std::string_view content) {
  gnnbed::ShardManifest manifest = set.manifest;
  if (content.size() >= gnnbed::kFileHeaderBytes) {
    for (auto& entry : manifest.shards) {
      if (entry.file == file) {
        entry.header_checksum = gnnbed::shard_header_checksum(
            std::as_bytes(std::span(content.data(), gnnbed::kFileHeaderBytes)));
      }
    }
  }
  return manifest.to_json().dump(2);
}

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  std::vector<std::string> seeds;
  for (std::size_t which = 0; which < 2; ++which) {
    std::size_t index = 0;
    for (const auto& [name, content] : shard_sets()[which].files) {
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
  const ShardSet& set = shard_sets()[input.file_index % 2];
  const FileSet& files = set.files;
  const std::size_t replaced = (input.file_index / 2) % files.size();
  Scratch& scratch = Scratch::instance();
  const std::filesystem::path& folder = scratch.fresh();
  const std::string replaced_name = std::next(files.begin(), static_cast<long>(replaced))->first;
  for (const auto& [name, content] : files) {
    if (name == replaced_name) {
      scratch.write(name, input.content);
    } else if (name == "manifest.json") {
      scratch.write(name, signed_manifest(set, replaced_name, input.content));
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
