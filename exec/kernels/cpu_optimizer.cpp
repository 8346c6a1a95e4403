#include <cmath>
#include <string>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/common/errors.hpp"

namespace gnnbed::cpu {

void check_lengths(std::size_t value, std::size_t grad, std::size_t state, const char* what) {
  if (grad != value || state != value) {
    throw Error(std::string(what) + ": " + std::to_string(value) + " values, " +
                std::to_string(grad) + " gradients, " + std::to_string(state) + " state entries");
  }
}

void sgd_step(std::span<float> value, std::span<const float> grad, std::span<float> velocity,
              float learning_rate, float momentum) {
  check_lengths(value.size(), grad.size(), velocity.size(), "sgd_step");
  for (std::size_t i = 0; i < value.size(); ++i) {
    velocity[i] = momentum * velocity[i] + grad[i];
    value[i] -= learning_rate * velocity[i];
  }
}

void adam_step(std::span<float> value, std::span<const float> grad, std::span<float> first_moment,
               std::span<float> second_moment, const AdamStep& step) {
  check_lengths(value.size(), grad.size(), first_moment.size(), "adam_step");
  check_lengths(value.size(), grad.size(), second_moment.size(), "adam_step");
  for (std::size_t i = 0; i < value.size(); ++i) {
    const double g = grad[i];
    first_moment[i] = static_cast<float>(step.beta1 * first_moment[i] + (1.0 - step.beta1) * g);
    second_moment[i] =
        static_cast<float>(step.beta2 * second_moment[i] + (1.0 - step.beta2) * g * g);
    const double denominator = std::sqrt(second_moment[i] / step.correction2) + step.epsilon;
    value[i] = static_cast<float>(value[i] - step.step_size * first_moment[i] / denominator);
  }
}

}  // namespace gnnbed::cpu
