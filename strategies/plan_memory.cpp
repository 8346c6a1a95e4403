#include "strategies/plan_memory.hpp"

#include <algorithm>
#include <vector>

#include "strategies/model_ops.hpp"

namespace gnnbed {
namespace {

// Value, gradient and Adam's two moments per parameter element.
constexpr std::int64_t kParameterCopies = 4;

}  // namespace

std::int64_t parameter_state_bytes(const Plan& plan) {
  std::int64_t bytes = 0;
  for (const ParameterSpec& p : plan.parameters)
    bytes += kParameterCopies * kFloatBytes * p.local_elements();
  return bytes;
}

std::int64_t plan_peak_bytes(const Plan& plan) {
  const std::size_t num_tensors = plan.tensors.size();
  std::vector<int> first_write(num_tensors, -1);
  std::vector<int> last_use(num_tensors, -1);
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    const Op& op = plan.ops[j];
    for (const auto* ids : {&op.inputs, &op.outputs}) {
      for (const int t : *ids) {
        if (t < 0) continue;
        const auto slot = static_cast<std::size_t>(t);
        last_use[slot] = static_cast<int>(j);
        if (ids == &op.outputs && first_write[slot] < 0) first_write[slot] = static_cast<int>(j);
      }
    }
  }
  std::int64_t live = parameter_state_bytes(plan);
  std::vector<std::vector<std::size_t>> freed_after(plan.ops.size());
  std::vector<std::vector<std::size_t>> allocated_at(plan.ops.size());
  for (std::size_t t = 0; t < num_tensors; ++t) {
    if (plan.tensors[t].persistent) {
      live += plan.tensors[t].bytes();  // held from one plan to the next
      continue;
    }
    if (last_use[t] < 0) continue;
    if (first_write[t] < 0) {
      live += plan.tensors[t].bytes();  // carried by the plan: there from the start
    } else {
      allocated_at[static_cast<std::size_t>(first_write[t])].push_back(t);
    }
    freed_after[static_cast<std::size_t>(last_use[t])].push_back(t);
  }
  std::int64_t peak = live;
  for (std::size_t j = 0; j < plan.ops.size(); ++j) {
    for (const std::size_t t : allocated_at[j]) live += plan.tensors[t].bytes();
    peak = std::max(peak, live);
    for (const std::size_t t : freed_after[j]) live -= plan.tensors[t].bytes();
  }
  return peak;
}

std::int64_t pipeline_stash_bytes(const Plan& plan) {
  if (plan.weight_staleness() == 0) return 0;
  std::int64_t values = 0;
  for (const ParameterSpec& p : plan.parameters) values += kFloatBytes * p.local_elements();
  return (2 * (plan.pipeline_depth + 1) + 1) * values;
}

std::int64_t DeviceMemory::add(const Plan& plan) {
  const std::int64_t peak = plan_peak_bytes(plan);
  if (plan.pipeline_depth == 0) return peak;
  const std::int64_t parameters = parameter_state_bytes(plan);
  in_flight_.push_back(peak - parameters);
  if (static_cast<int>(in_flight_.size()) > plan.pipeline_depth + 1) in_flight_.pop_front();
  std::int64_t bytes = parameters + pipeline_stash_bytes(plan);
  for (const std::int64_t tensors : in_flight_) bytes += tensors;
  return bytes;
}

}  // namespace gnnbed
