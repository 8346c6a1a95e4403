// The knowledge-graph triples reader (load_triples_tsv): the whole input is the file.
#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/link_prediction/link_prediction_data.hpp"

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  return {
      "# a comment\nparis\tcapital_of\tfrance\n\nberlin\tcapital_of\tgermany\r\n"
      "france\tborders\tgermany\nx\tr\tx\n"};
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gnnbed::fuzz;
  Scratch& scratch = Scratch::instance();
  scratch.fresh();
  const std::filesystem::path file =
      scratch.write("triples.tsv", std::string_view(reinterpret_cast<const char*>(data), size));
  expect_only_gnnbed_errors([&] { gnnbed::load_triples_tsv(file.string()); });
  return 0;
}
