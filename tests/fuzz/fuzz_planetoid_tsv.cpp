// The Planetoid TSV reader (load_planetoid_tsv): one of the folder's five files replaced by the
// input, the others those of a valid six-node dataset.
#include <array>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/loaders.hpp"

namespace {

using gnnbed::fuzz::NamedFile;

// Two classes, three features, a triangle and a path; one node unlabelled.
const std::array<NamedFile, 5> kFiles = {{
    {"meta.tsv",
     "num_nodes\t6\nnum_features\t3\nnum_classes\t2\nnum_undirected_edges\t5\n"
     "num_self_loops\t0\nnum_feature_nonzeros\t7\n"
     "feature_format\tfeatures_sparse.tsv (node<TAB>feature<TAB>value, non-zeros only)\n"
     "num_unlabeled_nodes\t1\nnum_train\t2\nnum_val\t1\nnum_test\t2\n"},
    {"edges.tsv", "0\t1\n0\t2\n1\t2\n3\t4\n4\t5\n"},
    {"features_sparse.tsv", "0\t0\t1\n1\t1\t0.5\n2\t2\t1\n3\t0\t2\n4\t1\t1\n5\t2\t-1\n5\t0\t1\n"},
    {"labels.tsv", "0\t0\n1\t0\n2\t0\n3\t1\n4\t1\n5\t-1\n"},
    {"split.tsv", "0\ttrain\n3\ttrain\n1\tval\n2\ttest\n4\ttest\n"},
}};

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() { return file_set_seeds(kFiles); }

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gnnbed::fuzz::read_input_as_file_set(data, size, kFiles, [](const std::filesystem::path& folder) {
    gnnbed::load_planetoid_tsv(folder);
  });
  return 0;
}
