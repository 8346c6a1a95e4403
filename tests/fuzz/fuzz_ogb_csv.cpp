// The OGB node-property reader (load_ogb): one of its seven CSV tables replaced by the input, the
// others those of a valid five-node dataset.
#include <array>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/loaders.hpp"

namespace {

using gnnbed::fuzz::NamedFile;

const std::array<NamedFile, 7> kFiles = {{
    {"raw/edge.csv", "0,1\n1,2\n2,3\n3,4\n4,0\n"},
    {"raw/node-feat.csv", "0.5,1\n-1,0\n2,2.5\n0,0\n1e-3,7\n"},
    {"raw/node-label.csv", "0\n1\nnan\n1\n0\n"},
    {"raw/num-node-list.csv", "5\n"},
    {"split/time/train.csv", "0\n1\n"},
    {"split/time/valid.csv", "3\n"},
    {"split/time/test.csv", "4\n"},
}};

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() { return file_set_seeds(kFiles); }

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gnnbed::fuzz::read_input_as_file_set(data, size, kFiles, [](const std::filesystem::path& folder) {
    gnnbed::load_ogb(folder, gnnbed::OgbOptions{});
  });
  return 0;
}
