#pragma once
// Optimisers over the model's parameters, plus L2 weight decay folded into the gradients.
#include <memory>
#include <span>
#include <vector>

#include "exec/kernels/compute_backend.hpp"
#include "exec/nn/layers.hpp"
#include "strategies/config/training_config.hpp"

namespace gnnbed {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates every parameter from its grad. The parameter list must be the same (same order) at
  // every call.
  virtual void step(std::span<Parameter* const> parameters) = 0;

  // Where the updates run (the CPU unless set; the backend must outlive the optimiser).
  void set_backend(ComputeBackend& backend) { backend_ = &backend; }

 protected:
  ComputeBackend& backend() { return *backend_; }

 private:
  ComputeBackend* backend_ = &cpu_backend();
};

// Plain SGD, with optional momentum (v = momentum * v + g; w -= lr * v).
class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(double learning_rate, double momentum);
  void step(std::span<Parameter* const> parameters) override;

 private:
  double learning_rate_;
  double momentum_;
  std::vector<Matrix> velocity_;  // one per parameter, its shape
};

// Adam (Kingma & Ba) with bias correction; beta1 0.9, beta2 0.999, epsilon 1e-8.
class AdamOptimizer final : public Optimizer {
 public:
  explicit AdamOptimizer(double learning_rate);
  void step(std::span<Parameter* const> parameters) override;

 private:
  double learning_rate_;
  std::int64_t steps_ = 0;
  std::vector<Matrix> first_moment_;  // one per parameter, its shape
  std::vector<Matrix> second_moment_;
};

std::unique_ptr<Optimizer> make_optimizer(const TrainingConfig& config);

// grad += weight_decay * value for weight matrices (of every layer, or of the first only).
void apply_weight_decay(std::span<Parameter* const> parameters, const TrainingConfig& config);

}  // namespace gnnbed
