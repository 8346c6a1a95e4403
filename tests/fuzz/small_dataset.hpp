#pragma once
// The small generated dataset the fuzz targets' seeds are written from: big enough to have every
// section (edges, stored features, labels, a split with every part), small enough to mutate fast.
#include <memory>
#include <vector>

#include "workloads/generators.hpp"

namespace gnnbed::fuzz {

// With `stored_features`, the generated features are kept as values (written as a section);
// without, as their parameters.
inline Dataset small_generated_dataset(bool stored_features) {
  CsbmParams params;
  params.num_nodes = 40;
  params.average_degree = 4;
  params.num_classes = 3;
  params.feature_dim = 4;
  params.train_fraction = 0.3;
  params.val_fraction = 0.2;
  params.test_fraction = 0.3;
  params.seed = 5;
  Dataset dataset = generate_csbm(params);
  if (stored_features) {
    std::vector<float> values(static_cast<std::size_t>(params.num_nodes * params.feature_dim));
    std::vector<NodeId> nodes(static_cast<std::size_t>(params.num_nodes));
    for (std::size_t v = 0; v < nodes.size(); ++v) nodes[v] = static_cast<NodeId>(v);
    dataset.features->gather(nodes, values.data());
    dataset.features = std::make_shared<StoredFeatures>(params.num_nodes, params.feature_dim,
                                                        SharedArray<float>(std::move(values)));
  }
  return dataset;
}

}  // namespace gnnbed::fuzz
