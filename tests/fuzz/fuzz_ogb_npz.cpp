// The OGB NumPy-layout reader (load_ogb over raw/data.npz, npz_reader.hpp): the input is
// raw/data.npz; the labels, raw/node-label.npz, and the splits are those of a valid six-node
// dataset. Seeds: the deflated and the zip64 archives of tests/workloads/data/ogb_npz.
#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/loaders.hpp"

namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(GNNBED_SOURCE_DIR) / "tests/workloads/data/ogb_npz";

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  return {read_whole_file(kFixtures / "deflated-data.npz"),
          read_whole_file(kFixtures / "zip64-data.npz")};
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string labels =
      gnnbed::fuzz::read_whole_file(kFixtures / "deflated-node-label.npz");
  gnnbed::fuzz::read_input_as_file(
      data, size, "raw/data.npz", [](const std::filesystem::path& file) {
        const auto& scratch = gnnbed::fuzz::Scratch::instance();
        scratch.write("raw/node-label.npz", labels);
        scratch.write("split/time/train.csv", "0\n1\n");
        scratch.write("split/time/valid.csv", "3\n");
        scratch.write("split/time/test.csv", "4\n5\n");
        gnnbed::load_ogb(file.parent_path().parent_path(), gnnbed::OgbOptions{});
      });
  return 0;
}
