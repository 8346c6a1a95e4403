// ROC-like full-graph training [P3 paper, sections 5.9 and 6; ROC: Jia et al., MLSys 2020]. The
// graph is partitioned across ranks (ROC's partitioners: roc_partition.hpp) and every epoch is one
// step on the whole graph: each rank computes its own nodes at every layer from their in-edges
// (full_graph.hpp). Every layer needs the representations of the rank's remote in-neighbours (the
// halo): at the first layer their features, pulled from their owners as DGL pulls them; at later
// layers their activations, which every owner sends to the ranks whose halo holds its nodes.
// Backward, the gradients of the halo's rows go back to their owners, who add them to their own.
// The weights are replicated and their gradients all-reduced. Data moves every layer, every
// epoch: what P3's comparison with ROC turns on. ROC's memory manager (keeping tensors in host
// memory and moving them to the GPU as needed) is not modelled: every tensor lives on the device.
#include "strategies/halo.hpp"
#include "strategies/model_ops.hpp"
#include "strategies/strategy.hpp"
#include "strategies/strategy_common.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

// One rank's plan for one epoch: the halo's features pulled, its later layers' rows exchanged
// every layer.
class RocPlanner final : public HaloPlanner {
 public:
  RocPlanner(const StrategyContext& context, const RankIteration& iteration)
      : HaloPlanner(context, iteration, "roc") {}

 private:
  int layer_input(int layer, int own, Traffic traffic) override {
    if (num_ranks_ == 1) return own;
    const std::string name = "layer" + std::to_string(layer);
    std::vector<int> pairs = {own_rows_, own};
    if (layer == 0) {
      const std::vector<int> pulled = emit_feature_pull(builder_, context_, "pull halo features",
                                                        *requests_, *received_, announced_, rank_);
      for (int q = 0; q < num_ranks_; ++q) {
        if (q == rank_) continue;
        pairs.push_back(halo_rows_[static_cast<std::size_t>(q)]);
        pairs.push_back(pulled[static_cast<std::size_t>(q)]);
      }
    } else {
      pairs = exchange_rows(builder_, name + " halo activations", traffic, rank_, served_rows_,
                            halo_rows_, own, std::move(pairs));
    }
    return assemble(name + " input", layer, std::move(pairs), block_.num_src(),
                    builder_.tensor(own).cols);
  }

  bool takes_sparse_features() const override { return true; }

  int own_input_gradient(int layer, int grad_input) override {
    const std::string name = "layer" + std::to_string(layer);
    const int own_gradients =
        rows_for(builder_, name + " own input gradients", own_rows_, grad_input);
    std::vector<int> pairs =
        exchange_rows(builder_, name + " halo gradients", Traffic::gradients, rank_, halo_rows_,
                      served_rows_, grad_input, {own_rows_, own_gradients});
    const int grad = builder_.add_dense("layer" + std::to_string(layer - 1) + ".out.grad",
                                        block_.num_dst, builder_.tensor(grad_input).cols);
    builder_.add_op(
        scatter_add_op(builder_, "add " + name + " halo gradients", std::move(pairs), grad));
    return grad;
  }
};

class RocStrategy final : public HaloStrategy {
 public:
  std::string name() const override { return "roc"; }

  Plan plan(const StrategyContext& context, const RankIteration& iteration,
            const Announcement& requests, const Announcement& received) const override {
    return RocPlanner(context, iteration).build(requests, received);
  }
};

}  // namespace

std::unique_ptr<Strategy> make_roc_strategy() { return std::make_unique<RocStrategy>(); }

}  // namespace gnnbed
