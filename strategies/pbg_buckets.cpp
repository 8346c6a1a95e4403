// PBG's bucket orders and lock server (pbg_buckets.hpp).
#include "strategies/pbg_buckets.hpp"

#include <algorithm>
#include <limits>

#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/shuffle.hpp"

namespace gnnbed {
namespace {

std::vector<Bucket> all_buckets(int num_partitions) {
  std::vector<Bucket> buckets;
  for (int lhs = 0; lhs < num_partitions; ++lhs) {
    for (int rhs = 0; rhs < num_partitions; ++rhs) buckets.push_back({lhs, rhs});
  }
  return buckets;
}

// Layer i: the buckets whose smaller partition is i; (i, i) and each pair {(p, i), (i, p)} kept
// together, the groups and each pair's two buckets in random order.
std::vector<Bucket> layer(int num_partitions, int i, Rng& rng) {
  std::vector<std::vector<Bucket>> groups{{{i, i}}};
  for (int p = i + 1; p < num_partitions; ++p) {
    std::vector<Bucket> pair{{p, i}, {i, p}};
    shuffle(std::span(pair), rng);
    groups.push_back(pair);
  }
  shuffle(std::span(groups), rng);
  std::vector<Bucket> buckets;
  for (const auto& group : groups) buckets.insert(buckets.end(), group.begin(), group.end());
  return buckets;
}

std::vector<Bucket> layered(int num_partitions, bool inside_out, Rng& rng) {
  std::vector<std::vector<Bucket>> layers;
  for (int i = 0; i < num_partitions; ++i) layers.push_back(layer(num_partitions, i, rng));
  if (inside_out) std::reverse(layers.begin(), layers.end());
  std::vector<Bucket> buckets;
  for (const auto& l : layers) buckets.insert(buckets.end(), l.begin(), l.end());
  return buckets;
}

// How strongly `candidate` follows `previous`: its transpose most, then by shared partitions.
int affinity(const Bucket& candidate, const Bucket& previous) {
  if (candidate.lhs == previous.rhs && candidate.rhs == previous.lhs) return 3;
  return candidate.shared_partitions(previous);
}

std::vector<Bucket> by_affinity(int num_partitions, Rng& rng) {
  std::vector<Bucket> remaining = all_buckets(num_partitions);
  shuffle(std::span(remaining), rng);  // the random tie break: the first best in this order wins
  std::vector<Bucket> order{remaining.back()};
  remaining.pop_back();
  while (!remaining.empty()) {
    auto best = remaining.begin();
    for (auto it = remaining.begin(); it != remaining.end(); ++it) {
      if (affinity(*it, order.back()) > affinity(*best, order.back())) best = it;
    }
    order.push_back(*best);
    remaining.erase(best);
  }
  return order;
}

}  // namespace

const std::vector<std::string>& bucket_order_names() {
  static const std::vector<std::string> names{"inside_out", "outside_in", "random", "affinity"};
  return names;
}

std::vector<Bucket> single_machine_bucket_order(int num_partitions, const std::string& order,
                                                std::uint64_t seed) {
  require_one_of("training.bucket_order", order, bucket_order_names());
  Rng rng(seed);
  if (order == "random") {
    std::vector<Bucket> buckets = all_buckets(num_partitions);
    shuffle(std::span(buckets), rng);
    return buckets;
  }
  if (order == "affinity") return by_affinity(num_partitions, rng);
  return layered(num_partitions, order == "inside_out", rng);
}

LockServer::LockServer(int num_partitions, int num_trainers)
    : num_partitions_(num_partitions),
      held_(static_cast<std::size_t>(num_trainers)),
      trained_(static_cast<std::size_t>(num_partitions) *
               static_cast<std::size_t>(num_partitions)) {
  new_epoch();
}

void LockServer::new_epoch() {
  std::fill(held_.begin(), held_.end(), std::nullopt);
  std::fill(trained_.begin(), trained_.end(), false);
  remaining_ = static_cast<int>(trained_.size());
}

bool LockServer::locked_by_other(int partition, int trainer) const {
  for (std::size_t other = 0; other < held_.size(); ++other) {
    if (static_cast<int>(other) == trainer || !held_[other]) continue;
    if (held_[other]->lhs == partition || held_[other]->rhs == partition) return true;
  }
  return false;
}

std::optional<Bucket> LockServer::acquire(int trainer, std::optional<Bucket> previous) {
  if (held_[static_cast<std::size_t>(trainer)]) {
    throw Error("lock server: trainer " + std::to_string(trainer) +
                " asked for a bucket while holding one");
  }
  std::vector<Bucket> candidates = all_buckets(num_partitions_);
  if (previous) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](const Bucket& a, const Bucket& b) {
      const auto preference = [&](const Bucket& x) {
        return 2 * static_cast<int>(x.lhs == previous->lhs) +
               static_cast<int>(x.rhs == previous->rhs);
      };
      return preference(a) > preference(b);
    });
  }
  for (const Bucket& bucket : candidates) {
    const auto index = static_cast<std::size_t>(bucket.lhs * num_partitions_ + bucket.rhs);
    if (trained_[index] || locked_by_other(bucket.lhs, trainer) ||
        locked_by_other(bucket.rhs, trainer)) {
      continue;
    }
    trained_[index] = true;
    --remaining_;
    held_[static_cast<std::size_t>(trainer)] = bucket;
    return bucket;
  }
  return std::nullopt;
}

void LockServer::release(int trainer) { held_[static_cast<std::size_t>(trainer)].reset(); }

}  // namespace gnnbed
