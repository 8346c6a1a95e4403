// The edge-list reader (load_edge_list): the first byte's low bits choose the options
// (symmetrize, drop self loops, relabel), the rest is the file.
#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/loaders.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  const std::string edges = "# a comment\n0 1\n1\t2\n% another\n\n2 0\n5 5\n7 3\n";
  std::vector<std::string> seeds;
  for (std::size_t options = 0; options < 8; ++options) {
    seeds.push_back(make_file_set_input(options, edges));
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gnnbed::fuzz;
  const FileSetInput input = split_file_set_input(data, size, 8);
  gnnbed::EdgeListFileOptions options;
  options.symmetrize = (input.file_index & 1) != 0;
  options.drop_self_loops = (input.file_index & 2) != 0;
  options.relabel = (input.file_index & 4) != 0;
  Scratch& scratch = Scratch::instance();
  scratch.fresh();
  const std::filesystem::path file = scratch.write("edges.txt", input.content);
  expect_only_gnnbed_errors([&] { gnnbed::load_edge_list(file, options); });
  return 0;
}
