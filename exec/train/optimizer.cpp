#include "exec/train/optimizer.hpp"

#include <cmath>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

void size_state(std::vector<Matrix>& state, std::span<Parameter* const> parameters) {
  if (!state.empty()) {
    if (state.size() != parameters.size()) throw Error("optimizer: the parameter list changed");
    return;
  }
  for (const Parameter* p : parameters) {
    state.emplace_back(p->value.rows(), p->value.cols());
  }
}

}  // namespace

SgdOptimizer::SgdOptimizer(double learning_rate, double momentum)
    : learning_rate_(learning_rate), momentum_(momentum) {}

void SgdOptimizer::step(std::span<Parameter* const> parameters) {
  size_state(velocity_, parameters);
  const auto lr = static_cast<float>(learning_rate_);
  const auto momentum = static_cast<float>(momentum_);
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    backend().sgd_step(parameters[p]->value, parameters[p]->grad, velocity_[p], lr, momentum);
  }
}

AdamOptimizer::AdamOptimizer(double learning_rate) : learning_rate_(learning_rate) {}

void AdamOptimizer::step(std::span<Parameter* const> parameters) {
  size_state(first_moment_, parameters);
  size_state(second_moment_, parameters);
  ++steps_;
  AdamStep step;  // beta1 0.9, beta2 0.999, epsilon 1e-8
  step.correction2 = 1.0 - std::pow(step.beta2, static_cast<double>(steps_));
  step.step_size = learning_rate_ / (1.0 - std::pow(step.beta1, static_cast<double>(steps_)));
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    backend().adam_step(parameters[p]->value, parameters[p]->grad, first_moment_[p],
                        second_moment_[p], step);
  }
}

std::unique_ptr<Optimizer> make_optimizer(const TrainingConfig& config) {
  if (config.optimizer == "sgd")
    return std::make_unique<SgdOptimizer>(config.learning_rate, config.momentum);
  if (config.optimizer == "adam") return std::make_unique<AdamOptimizer>(config.learning_rate);
  throw ConfigError("training.optimizer", "'" + config.optimizer + "' is not one of: adam, sgd");
}

void apply_weight_decay(std::span<Parameter* const> parameters, const TrainingConfig& config) {
  if (config.weight_decay == 0.0) return;
  const auto decay = static_cast<float>(config.weight_decay);
  const bool first_only = config.weight_decay_layers == "first";
  for (Parameter* p : parameters) {
    if (!p->is_weight || (first_only && p->layer != 0)) continue;
    float* g = p->grad.data();
    const float* w = p->value.data();
    for (std::int64_t i = 0; i < p->value.size(); ++i) g[i] += decay * w[i];
  }
}

}  // namespace gnnbed
