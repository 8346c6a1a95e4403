#include "workloads/workload_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>

#include "workloads/binary_format.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"
#include "workloads/generators.hpp"
#include "workloads/loaders.hpp"
#include "workloads/presets.hpp"
#include "workloads/sparse_features.hpp"

namespace gnnbed {
namespace {

std::uint64_t part_seed(const WorkloadConfig& config, std::uint64_t part) {
  return hash_mix(config.seed, part);
}

std::int64_t fraction_of(double fraction, std::int64_t count) {
  return static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(count)));
}

// Class-conditional features of the configured width, generated for `labels`.
std::shared_ptr<GeneratedFeatures> generated_features(const WorkloadConfig& config,
                                                      const SharedArray<std::int32_t>& labels) {
  return std::make_shared<GeneratedFeatures>(config.generated_feature_dim(), labels,
                                             config.feature_signal, part_seed(config, 3));
}

// Labels, a split and generated features for a structure-only graph: labels uniform over the
// classes unless given (a generator's communities), the split and class-conditional features
// from the config.
Dataset with_generated_node_data(std::string name, Graph graph, const WorkloadConfig& config,
                                 std::vector<std::int32_t> labels = {}) {
  Dataset dataset;
  dataset.name = std::move(name);
  dataset.num_classes = config.num_classes;
  if (labels.empty())
    labels = generate_labels(graph.num_nodes(), config.num_classes, part_seed(config, 1));
  dataset.labels = SharedArray(std::move(labels));
  const std::int64_t n = graph.num_nodes();
  dataset.split = random_split(dataset.labels.span(), fraction_of(config.train_fraction, n),
                               fraction_of(config.val_fraction, n),
                               fraction_of(config.test_fraction, n), part_seed(config, 2));
  dataset.features = generated_features(config, dataset.labels);
  dataset.graph = std::move(graph);
  return dataset;
}

std::string required_path(const WorkloadConfig& config) {
  if (config.path.empty()) {
    throw ConfigError("workload.path",
                      "source '" + config.source + "' reads a file or directory: set path");
  }
  return config.path;
}

GraphStorage storage_of(const WorkloadConfig& config) {
  if (config.storage == "memory") return GraphStorage::memory;
  if (config.storage == "implicit") return GraphStorage::implicit;
  if (config.storage == "file") return GraphStorage::file;
  return GraphStorage::automatic;
}

std::string cache_directory_of(const WorkloadConfig& config) {
  if (!config.cache_dir.empty()) return config.cache_dir;
  for (const char* variable : {"GNNBED_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') continue;
    const std::filesystem::path base(value);
    if (std::string(variable) == "GNNBED_CACHE_DIR") return base.string();
    return (std::string(variable) == "HOME" ? base / ".cache" / "gnnbed" : base / "gnnbed")
        .string();
  }
  throw ConfigError("workload.cache_dir",
                    "storage 'file' needs a cache directory: set workload.cache_dir, "
                    "GNNBED_CACHE_DIR or HOME");
}

using SourceLoader = std::function<Dataset(const WorkloadConfig&, const StepProgress&)>;

Dataset load_bundled(const std::string& name) {
  return load_planetoid_tsv(std::filesystem::path(bundled_datasets_directory()) / name);
}

std::map<std::string, SourceLoader> make_sources() {
  std::map<std::string, SourceLoader> sources = {
      {"cora", [](const WorkloadConfig&, const StepProgress&) { return load_bundled("cora"); }},
      {"citeseer",
       [](const WorkloadConfig&, const StepProgress&) { return load_bundled("citeseer"); }},
      {"pubmed", [](const WorkloadConfig&, const StepProgress&) { return load_bundled("pubmed"); }},
      {"planetoid-tsv", [](const WorkloadConfig& c,
                           const StepProgress&) { return load_planetoid_tsv(required_path(c)); }},
      {"binary", [](const WorkloadConfig& c,
                    const StepProgress&) { return load_binary_workload(required_path(c)); }},
      {"shards",
       [](const WorkloadConfig& c, const StepProgress&) -> Dataset {
         throw ConfigError("workload.source",
                           "'shards' (" + required_path(c) +
                               ") holds one part per rank: run_experiment loads it, each rank "
                               "its own shard; other programs need the workload it was cut from");
       }},
      {"ogb",
       [](const WorkloadConfig& c, const StepProgress&) {
         return load_ogb(required_path(c), OgbOptions{c.ogb_split, c.symmetrize});
       }},
      {"edge-list",
       [](const WorkloadConfig& c, const StepProgress&) {
         const std::filesystem::path path = required_path(c);
         Graph graph = load_edge_list(path, {c.symmetrize, c.drop_self_loops, c.relabel});
         return with_generated_node_data(path.stem().string(), std::move(graph), c);
       }},
      {"rmat",
       [](const WorkloadConfig& c, const StepProgress&) {
         RmatParams params;
         params.num_nodes = c.num_nodes;
         params.num_undirected_edges = static_cast<std::int64_t>(
             std::llround(static_cast<double>(c.num_nodes) * c.average_degree / 2));
         params.seed = part_seed(c, 4);
         params.a = c.rmat_a.value_or(params.a);
         params.b = c.rmat_b.value_or(params.b);
         params.c = c.rmat_c.value_or(params.c);
         if (c.edge_homophily.value_or(0) == 0)
           return with_generated_node_data("rmat", generate_rmat(params), c);
         // The classes are communities of the graph, and the labels say which.
         params.num_communities = c.num_classes;
         params.edge_homophily = *c.edge_homophily;
         Graph graph = generate_rmat(params);
         return with_generated_node_data("rmat", std::move(graph), c, rmat_communities(params));
       }},
      {"csbm",
       [](const WorkloadConfig& c, const StepProgress&) {
         CsbmParams params;
         params.num_nodes = c.num_nodes;
         params.average_degree = c.average_degree;
         params.num_classes = c.num_classes;
         params.homophily = c.homophily;
         params.feature_dim = c.generated_feature_dim();
         params.feature_signal = c.feature_signal;
         params.train_fraction = c.train_fraction;
         params.val_fraction = c.val_fraction;
         params.test_fraction = c.test_fraction;
         params.seed = c.seed;
         return generate_csbm(params);
       }},
  };
  for (const PresetSpec& preset : presets()) {
    sources.emplace(preset.name,
                    [name = preset.name](const WorkloadConfig& c, const StepProgress& progress) {
                      PresetSpec spec = scaled(find_preset(name), c.scale);
                      spec.rmat_a = c.rmat_a.value_or(spec.rmat_a);
                      spec.rmat_b = c.rmat_b.value_or(spec.rmat_b);
                      spec.rmat_c = c.rmat_c.value_or(spec.rmat_c);
                      spec.edge_homophily = c.edge_homophily.value_or(spec.edge_homophily);
                      spec.feature_dim = c.feature_dim.value_or(spec.feature_dim);
                      PresetOptions options;
                      options.storage = storage_of(c);
                      // Files go to the default cache unless told otherwise; an implicit graph's
                      // offsets are kept only where the user names a cache directory.
                      if (options.storage == GraphStorage::file)
                        options.cache_directory = cache_directory_of(c);
                      if (options.storage != GraphStorage::file)
                        options.cache_directory = c.cache_dir;
                      options.progress = progress;
                      return generate_preset(spec, c.seed, options);
                    });
  }
  return sources;
}

const std::map<std::string, SourceLoader>& sources() {
  static const std::map<std::string, SourceLoader> known = make_sources();
  return known;
}

bool is_planetoid(const std::string& source) {
  return source == "cora" || source == "citeseer" || source == "pubmed" ||
         source == "planetoid-tsv";
}

// Every node's features as stored float32 values.
StoredFeatures materialized(const FeatureStore& features) {
  std::vector<NodeId> nodes(static_cast<std::size_t>(features.num_nodes()));
  std::iota(nodes.begin(), nodes.end(), NodeId{0});
  std::vector<float> values(nodes.size() * static_cast<std::size_t>(features.dim()));
  features.gather(nodes, values.data());
  return StoredFeatures(features.num_nodes(), features.dim(), SharedArray(std::move(values)));
}

// Holds stored features in the layout `config.feature_rows` asks for.
void apply_feature_rows(Dataset& dataset, const WorkloadConfig& config) {
  if (config.feature_rows == "dense") {
    if (const auto* sparse = dynamic_cast<const SparseFeatures*>(dataset.features.get())) {
      dataset.features = std::make_shared<StoredFeatures>(materialized(*sparse));
    }
  } else if (config.feature_rows == "sparse") {
    if (const auto* stored = dynamic_cast<const StoredFeatures*>(dataset.features.get())) {
      dataset.features = std::make_shared<SparseFeatures>(SparseFeatures::nonzeros_of(*stored));
    }
  }
}

void apply_feature_options(Dataset& dataset, const WorkloadConfig& config) {
  if (config.features == "none") {
    dataset.features.reset();
    return;
  }
  if (config.features == "generated" || !dataset.features) {
    if (dataset.labels.empty()) {
      throw ConfigError("workload.features",
                        "generated features need labels, and '" + dataset.name + "' has none");
    }
    dataset.features = generated_features(config, dataset.labels);
  }
  const bool computed = dynamic_cast<const GeneratedFeatures*>(dataset.features.get()) != nullptr;
  if (config.features == "stored" && computed) {
    dataset.features = std::make_shared<StoredFeatures>(materialized(*dataset.features));
  }
  apply_feature_rows(dataset, config);
  const bool row = config.feature_normalization == "row" ||
                   (config.feature_normalization == "auto" && is_planetoid(config.source));
  if (!row) return;
  if (const auto* stored = dynamic_cast<const StoredFeatures*>(dataset.features.get())) {
    dataset.features = std::make_shared<StoredFeatures>(stored->row_normalized());
  } else if (const auto* sparse = dynamic_cast<const SparseFeatures*>(dataset.features.get())) {
    dataset.features = std::make_shared<SparseFeatures>(sparse->row_normalized());
  } else if (config.feature_normalization == "row") {
    throw ConfigError("workload.feature_normalization",
                      "'row' needs stored features; '" + dataset.name + "' has generated ones");
  }
}

void validate_config(const WorkloadConfig& config) {
  require(config.scale > 0, "workload.scale", "must be positive");
  // Only a preset has a size to scale: anywhere else a scale would be ignored without a word.
  const auto& known = presets();
  require(config.scale == 1 ||
              std::any_of(known.begin(), known.end(),
                          [&](const PresetSpec& preset) { return preset.name == config.source; }),
          "workload.scale",
          "scales a preset (products-like, papers-like, ...); '" + config.source +
              "' has the size it has");
  require(config.num_nodes >= 2, "workload.num_nodes", "must be at least 2");
  require(config.average_degree > 0, "workload.average_degree", "must be positive");
  require(config.num_classes >= 2, "workload.num_classes", "must be at least 2");
  require(config.homophily >= 0 && config.homophily <= 1, "workload.homophily",
          "must lie in [0, 1]");
  require(config.feature_dim.value_or(1) >= 1, "workload.feature_dim", "must be at least 1");
  require(config.train_fraction >= 0 && config.val_fraction >= 0 && config.test_fraction >= 0 &&
              config.train_fraction + config.val_fraction + config.test_fraction <= 1,
          "workload.train_fraction", "train, val and test fractions must be >= 0 and sum to <= 1");
  require_one_of("workload.features", config.features, {"auto", "generated", "stored", "none"});
  require_one_of("workload.feature_normalization", config.feature_normalization,
                 {"auto", "row", "none"});
  require_one_of("workload.feature_rows", config.feature_rows, {"auto", "dense", "sparse"});
  require_one_of("workload.storage", config.storage, {"auto", "memory", "implicit", "file"});
  require(!config.edge_homophily || (std::isfinite(*config.edge_homophily) &&
                                     *config.edge_homophily >= 0 && *config.edge_homophily <= 1),
          "workload.edge_homophily",
          "is a share of the edges and must lie in [0, 1] (0: labels independent of the "
          "structure)");
}

}  // namespace

WorkloadConfig workload_config_from_json(const nlohmann::json& object,
                                         const WorkloadConfig& defaults, const std::string& where) {
  WorkloadConfig config = defaults;
  JsonFieldReader reader(object, where);
  reader.read("source", config.source);
  reader.read("path", config.path);
  reader.read("scale", config.scale);
  reader.read("seed", config.seed);
  reader.read("num_nodes", config.num_nodes);
  reader.read("average_degree", config.average_degree);
  reader.read("num_classes", config.num_classes);
  reader.read("homophily", config.homophily);
  reader.read("feature_dim", config.feature_dim);
  reader.read("feature_signal", config.feature_signal);
  reader.read("train_fraction", config.train_fraction);
  reader.read("val_fraction", config.val_fraction);
  reader.read("test_fraction", config.test_fraction);
  reader.read("rmat_a", config.rmat_a);
  reader.read("rmat_b", config.rmat_b);
  reader.read("rmat_c", config.rmat_c);
  reader.read("edge_homophily", config.edge_homophily);
  reader.read("features", config.features);
  reader.read("feature_normalization", config.feature_normalization);
  reader.read("feature_rows", config.feature_rows);
  reader.read("symmetrize", config.symmetrize);
  reader.read("drop_self_loops", config.drop_self_loops);
  reader.read("relabel", config.relabel);
  reader.read("ogb_split", config.ogb_split);
  reader.read("storage", config.storage);
  reader.read("cache_dir", config.cache_dir);
  reader.finish();
  return config;
}

nlohmann::json to_json(const WorkloadConfig& config) {
  return {{"source", config.source},
          {"path", config.path},
          {"scale", config.scale},
          {"seed", config.seed},
          {"num_nodes", config.num_nodes},
          {"average_degree", config.average_degree},
          {"num_classes", config.num_classes},
          {"homophily", config.homophily},
          {"feature_dim",
           config.feature_dim ? nlohmann::json(*config.feature_dim) : nlohmann::json(nullptr)},
          {"feature_signal", config.feature_signal},
          {"train_fraction", config.train_fraction},
          {"val_fraction", config.val_fraction},
          {"test_fraction", config.test_fraction},
          {"rmat_a", config.rmat_a ? nlohmann::json(*config.rmat_a) : nlohmann::json(nullptr)},
          {"rmat_b", config.rmat_b ? nlohmann::json(*config.rmat_b) : nlohmann::json(nullptr)},
          {"rmat_c", config.rmat_c ? nlohmann::json(*config.rmat_c) : nlohmann::json(nullptr)},
          {"edge_homophily", config.edge_homophily ? nlohmann::json(*config.edge_homophily)
                                                   : nlohmann::json(nullptr)},
          {"features", config.features},
          {"feature_normalization", config.feature_normalization},
          {"feature_rows", config.feature_rows},
          {"symmetrize", config.symmetrize},
          {"drop_self_loops", config.drop_self_loops},
          {"relabel", config.relabel},
          {"ogb_split", config.ogb_split},
          {"storage", config.storage},
          {"cache_dir", config.cache_dir}};
}

const std::vector<ConfigOption>& workload_options() {
  static const std::vector<ConfigOption> options = {
      {"workload", "workload.source",
       "cora, citeseer, pubmed, a preset (products-like, papers-like, uk-like, uk-union-like, "
       "facebook-like), "
       "csbm, rmat, or a layout read from --path: planetoid-tsv, edge-list, ogb, binary, shards "
       "(run_experiment only)"},
      {"path", "workload.path",
       "file or directory for planetoid-tsv, edge-list, ogb, binary, shards"},
      {"scale", "workload.scale", "preset scale factor (node, edge and split counts)"},
      {"storage", "workload.storage",
       "presets: auto, memory, implicit (neighbours computed on demand) or file (generated once "
       "into --cache-dir, then memory-mapped)"},
      {"cache-dir", "workload.cache_dir",
       "storage file: where generated graphs are kept (default $GNNBED_CACHE_DIR, else "
       "~/.cache/gnnbed)"},
      {"features", "workload.features", "auto, generated, stored or none"},
      {"feature-rows", "workload.feature_rows",
       "stored features: auto (sparse files stay sparse when smaller), dense or sparse"},
  };
  return options;
}

std::vector<std::string> workload_source_names() {
  std::vector<std::string> names;
  for (const auto& [name, loader] : sources()) names.push_back(name);
  return names;
}

Dataset load_workload(const WorkloadConfig& config, const StepProgress& progress) {
  validate_config(config);
  const auto it = sources().find(config.source);
  if (it == sources().end()) {
    std::string known;
    for (const auto& name : workload_source_names()) known += (known.empty() ? "" : ", ") + name;
    throw ConfigError("workload.source", "'" + config.source + "' is not one of: " + known);
  }
  const bool is_preset = std::any_of(presets().begin(), presets().end(),
                                     [&](const PresetSpec& p) { return p.name == config.source; });
  if (config.storage != "auto" && !is_preset) {
    throw ConfigError("workload.storage", "'" + config.storage +
                                              "' applies to generated presets; source '" +
                                              config.source + "' is loaded as it is");
  }
  if (config.edge_homophily && !is_preset && config.source != "rmat") {
    throw ConfigError("workload.edge_homophily",
                      "applies to rmat and the presets (their classes as communities); source '" +
                          config.source + "' has its own structure and labels");
  }
  if (config.feature_dim && config.features == "none") {
    throw ConfigError("workload.feature_dim",
                      "sets generated features' width, and features is "
                      "'none' (structure only)");
  }
  Dataset dataset = it->second(config, progress);
  apply_feature_options(dataset, config);
  // A width that the source's own features do not have is refused, not ignored (only the
  // loaded sources get here: every generating one honours it).
  if (config.feature_dim && dataset.features && dataset.features->dim() != *config.feature_dim) {
    throw ConfigError("workload.feature_dim",
                      std::to_string(*config.feature_dim) + " columns, but source '" +
                          config.source + "' has " + std::to_string(dataset.features->dim()) +
                          " feature columns of its own; feature_dim sets generated features' "
                          "width (workload.features=generated replaces them)");
  }
  dataset.validate(dataset.name);
  return dataset;
}

std::string bundled_datasets_directory() {
  if (const char* overridden = std::getenv("GNNBED_DATASETS");
      overridden != nullptr && *overridden != '\0') {
    return overridden;
  }
  return GNNBED_BUNDLED_DATASETS_DIR;
}

}  // namespace gnnbed
