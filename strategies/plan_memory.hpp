#pragma once
// The device memory a rank's plans need, as both engines charge it: the simulator reports a point
// that does not fit as out of memory, and run_experiment with distribution.device_memory_bytes
// stops every rank before an iteration that would not fit on the modelled device.
#include <cstdint>
#include <deque>

#include "strategies/plan/plan.hpp"

namespace gnnbed {

// Peak bytes of the tensors a plan keeps alive at once (in plan order; its persistent tensors
// throughout) plus its parameters with their gradients and Adam's two moments. Needs the plan's
// index data.
std::int64_t plan_peak_bytes(const Plan& plan);

// A plan's parameters with their gradients and Adam's two moments.
std::int64_t parameter_state_bytes(const Plan& plan);

// Pipelined plans: the weights a rank stashes at most, beyond its current weights: every one of
// the depth + 1 mini-batches in flight holds its weight version and its gradients, and the
// version of the next mini-batch waits from its step to its admission (PlanExecutor measures
// the same). 0 for plans whose weights are never stale (Plan::weight_staleness).
std::int64_t pipeline_stash_bytes(const Plan& plan);

// One rank's device memory over its consecutive plans. Without pipelining a plan's peak; with it,
// the tensors of the mini-batches in flight are alive together (an upper bound: the sum of their
// plans' peaks without parameters), plus the parameters and the stash.
class DeviceMemory {
 public:
  // The bytes the device holds while `plan` runs (plans in iteration order); needs index data.
  std::int64_t add(const Plan& plan);

 private:
  std::deque<std::int64_t> in_flight_;  // tensor peaks of the last depth + 1 plans
};

}  // namespace gnnbed
