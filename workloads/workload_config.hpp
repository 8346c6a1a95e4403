#pragma once
// What a user names as "the workload", and how it becomes a Dataset. The same struct is read from
// an experiment file's "workload" object and overridden from the command line.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "workloads/common/json_config.hpp"
#include "workloads/common/progress.hpp"
#include "workloads/dataset.hpp"

namespace gnnbed {

struct WorkloadConfig {
  // One of: a bundled dataset ("cora", "citeseer", "pubmed"); a preset ("products-like", ...);
  // "csbm" or "rmat" (generated from the parameters below); or a file layout read from `path`:
  // "planetoid-tsv", "edge-list", "ogb", "binary"; or "shards", a sharded workload directory,
  // which only run_experiment reads (each rank its own shard, see shard_format.hpp).
  std::string source = "cora";
  std::string path;
  double scale = 1.0;      // presets only
  std::uint64_t seed = 1;  // every generated part (structure, labels, features, split)

  // Generated workloads (csbm, rmat) and generated parts of loaded ones.
  std::int64_t num_nodes = 10000;
  double average_degree = 10;
  int num_classes = 8;
  double homophily = 0.8;
  // Columns of generated features: rmat, csbm and edge lists, the presets (unset: the preset's
  // own) and any source with features=generated. Unset elsewhere: a source's stored features
  // fix their width, and setting it there is refused rather than ignored.
  std::optional<int> feature_dim;
  static constexpr int kDefaultFeatureDim = 64;
  int generated_feature_dim() const { return feature_dim.value_or(kDefaultFeatureDim); }
  float feature_signal = 0.3f;
  double train_fraction = 0.1, val_fraction = 0.1, test_fraction = 0.2;
  // R-MAT quadrant probabilities for "rmat" and the presets; unset = the preset's own (Graph500's
  // 0.57/0.19/0.19 for "rmat").
  std::optional<double> rmat_a, rmat_b, rmat_c;
  // rmat and the presets: the share of edges inside a class, the classes being communities of
  // the graph and the labels saying which (RmatParams, PresetSpec::edge_homophily); unset = the
  // preset's own (none for rmat), 0 = labels independent of the structure.
  std::optional<double> edge_homophily;

  // "auto": as the source provides them (generated for sources without features);
  // "generated": class-conditional generated features of `feature_dim` columns;
  // "stored": as "auto", but held as stored float32 values (generated ones computed once), as a
  // dataset with real features would be; "none": structure only.
  std::string features = "auto";
  // "auto": row-normalise the bag-of-words features of the Planetoid datasets, as Kipf & Welling
  // do, and nothing else; "row"; "none".
  std::string feature_normalization = "auto";
  // How stored features are held: "auto" keeps a sparse file's features sparse (CSR) when that
  // takes less memory than dense rows; "dense" and "sparse" force one layout. Generated features
  // are computed on demand and keep no layout.
  std::string feature_rows = "auto";

  bool symmetrize = true;  // edge-list and OGB files
  bool drop_self_loops = false;
  bool relabel = false;   // edge-list files: renumber the ids that occur densely
  std::string ogb_split;  // OGB: split directory name (empty = the only one)

  // Presets: where the graph's in-neighbour lists live (docs/large_graphs.md). "auto": in memory
  // up to 2^28 CSR entries, implicit beyond where the preset's model allows it; "memory";
  // "implicit" (computed on demand, nothing stored); "file": generated once into `cache_dir` and
  // memory-mapped from there on.
  std::string storage = "auto";
  // Empty: $GNNBED_CACHE_DIR, else $XDG_CACHE_HOME/gnnbed, else $HOME/.cache/gnnbed. An implicit
  // graph keeps its offsets here too, but only when this is set.
  std::string cache_dir;
};

// Reads the fields present in `object` over `defaults`; unknown fields and wrong types throw
// ConfigError naming the field (prefixed by `where`, e.g. "workload.scale").
WorkloadConfig workload_config_from_json(const nlohmann::json& object,
                                         const WorkloadConfig& defaults, const std::string& where);
nlohmann::json to_json(const WorkloadConfig& config);

// Loads or generates the dataset the config names, validated. Throws ConfigError for an unknown
// source (listing the known ones) and InputError for bad files. Generating or writing a
// billion-edge preset reports its steps to `progress`.
Dataset load_workload(const WorkloadConfig& config, const StepProgress& progress = {});

// The command-line options that set one workload field each (`--workload cora` is
// `--set workload.source=cora`): the workload tool's, and the first of every experiment program's.
const std::vector<ConfigOption>& workload_options();

// The sources load_workload knows, for help texts.
std::vector<std::string> workload_source_names();

// Where the bundled Planetoid datasets live: $GNNBED_DATASETS if set, else the source tree's
// workloads/datasets.
std::string bundled_datasets_directory();

}  // namespace gnnbed
