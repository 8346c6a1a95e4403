#pragma once
// Internal to the generators (generate_rmat.cpp, generate_csbm.cpp): drawing an exact number of
// distinct undirected edges from a candidate distribution, deterministically and independently of
// the thread count. An undirected edge {u, v} is the 64-bit key (min << 32) | max.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
#include "workloads/graph.hpp"

namespace gnnbed::detail {

// What a candidate generator returns when it found no usable edge.
inline constexpr std::uint64_t kNoEdge = std::numeric_limits<std::uint64_t>::max();

constexpr std::uint64_t undirected_key(NodeId u, NodeId v) {
  const auto low = static_cast<std::uint64_t>(std::min(u, v));
  const auto high = static_cast<std::uint64_t>(std::max(u, v));
  return (low << 32) | high;
}
constexpr NodeId key_low(std::uint64_t key) { return static_cast<NodeId>(key >> 32); }
constexpr NodeId key_high(std::uint64_t key) { return static_cast<NodeId>(key & 0xffffffffULL); }

// Uniform integer in [0, bound) from 64 random bits (multiply-shift; the bias is below 2^-32 for
// the bounds used here).
constexpr std::uint64_t bounded(std::uint64_t bits, std::uint64_t bound) {
  return static_cast<std::uint64_t>((static_cast<Uint128>(bits) * bound) >> 64);
}

inline std::int64_t max_undirected_edges(std::int64_t num_nodes) {
  return num_nodes < 2 ? 0 : num_nodes * (num_nodes - 1) / 2;
}

// Sorts keys whose set bits all lie in [0, id_bits) and [32, 32 + id_bits): a stable LSD radix
// sort over those bits only, 11 bits per pass, parallel over fixed chunks (the output is the
// sorted sequence whatever the thread count). Passes in which every key has the same digit are
// skipped.
inline void radix_sort_keys(std::vector<std::uint64_t>& keys, int id_bits) {
  constexpr int kDigitBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  const auto size = static_cast<std::int64_t>(keys.size());
  if (size < 2) return;
  if (size < (std::int64_t{1} << 16)) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<int> shifts;
  for (const int base : {0, 32}) {
    for (int bit = 0; bit < id_bits; bit += kDigitBits) shifts.push_back(base + bit);
  }
  const int num_chunks = std::max(1, omp_get_max_threads());
  auto chunk_begin = [&](int chunk) { return size * chunk / num_chunks; };
  std::vector<std::uint64_t> buffer(keys.size());
  std::vector<std::array<std::int64_t, kBuckets>> counts(static_cast<std::size_t>(num_chunks));
  std::uint64_t* from = keys.data();
  std::uint64_t* to = buffer.data();
  for (const int shift : shifts) {
    const std::uint64_t mask = kBuckets - 1;
#pragma omp parallel for schedule(static, 1)
    for (int chunk = 0; chunk < num_chunks; ++chunk) {
      auto& count = counts[static_cast<std::size_t>(chunk)];
      count.fill(0);
      for (std::int64_t i = chunk_begin(chunk); i < chunk_begin(chunk + 1); ++i) {
        ++count[(from[i] >> shift) & mask];
      }
    }
    const std::uint64_t first_digit = (from[0] >> shift) & mask;
    std::int64_t first_digit_count = 0;
    for (const auto& count : counts) first_digit_count += count[first_digit];
    if (first_digit_count == size) continue;
    std::int64_t position = 0;
    for (std::size_t bucket = 0; bucket < kBuckets; ++bucket) {
      for (auto& count : counts) {
        const std::int64_t n = count[bucket];
        count[bucket] = position;
        position += n;
      }
    }
#pragma omp parallel for schedule(static, 1)
    for (int chunk = 0; chunk < num_chunks; ++chunk) {
      auto& cursor = counts[static_cast<std::size_t>(chunk)];
      for (std::int64_t i = chunk_begin(chunk); i < chunk_begin(chunk + 1); ++i) {
        to[cursor[(from[i] >> shift) & mask]++] = from[i];
      }
    }
    std::swap(from, to);
  }
  if (from != keys.data()) keys.swap(buffer);
}

// Draws distinct undirected edges until exactly `num_edges` exist. `candidate(round, index)` must
// be a pure function returning an edge key (ids < num_nodes, no self loop) or kNoEdge. Round 0
// draws num_edges candidates; each later round draws enough candidates to cover the remaining
// deficit at the acceptance rate of the round before. When a round yields more new edges than
// needed, the ones kept are those of smallest hash_mix(seed, key), which keeps the choice a
// uniform, deterministic subset. Returns the sorted keys. Throws ConfigError naming `field` when
// num_edges exceeds n(n-1)/2, or when the candidates cannot supply enough distinct edges within a
// budget of rounds and candidates (a skewed distribution may essentially never draw some pairs).
template <typename Candidate>
std::vector<std::uint64_t> sample_distinct_edges(std::int64_t num_nodes, std::int64_t num_edges,
                                                 std::uint64_t seed, const std::string& field,
                                                 const Candidate& candidate) {
  constexpr std::uint64_t kMaxRounds = 200;
  const std::int64_t max_edges = max_undirected_edges(num_nodes);
  if (num_edges < 0 || num_edges > max_edges) {
    throw ConfigError(
        field, std::to_string(num_edges) + " undirected edges requested but a simple graph on " +
                   std::to_string(num_nodes) + " nodes has at most " + std::to_string(max_edges));
  }
  const int id_bits = std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(
                                      std::max<std::int64_t>(num_nodes - 1, 1)))));
  std::vector<std::uint64_t> edges;
  std::int64_t num_candidates = num_edges;
  const std::int64_t candidate_budget = 64 * num_edges + (std::int64_t{1} << 22);
  std::int64_t drawn = 0;
  for (std::uint64_t round = 0; static_cast<std::int64_t>(edges.size()) < num_edges; ++round) {
    if (round == kMaxRounds || drawn >= candidate_budget) {
      throw ConfigError(field, "only " + std::to_string(edges.size()) + " of " +
                                   std::to_string(num_edges) + " distinct edges were found in " +
                                   std::to_string(round) + " rounds (" + std::to_string(drawn) +
                                   " candidates): the request is too dense for this generator");
    }
    drawn += num_candidates;
    std::vector<std::uint64_t> fresh(static_cast<std::size_t>(num_candidates));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < num_candidates; ++i) {
      fresh[static_cast<std::size_t>(i)] = candidate(round, static_cast<std::uint64_t>(i));
    }
    fresh.erase(std::remove(fresh.begin(), fresh.end(), kNoEdge), fresh.end());
    radix_sort_keys(fresh, id_bits);
    fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    // Set difference against the edges already found, in place (writes never overtake reads).
    std::size_t kept = 0;
    for (std::size_t r = 0, e = 0; r < fresh.size(); ++r) {
      while (e < edges.size() && edges[e] < fresh[r]) ++e;
      if (e == edges.size() || edges[e] != fresh[r]) fresh[kept++] = fresh[r];
    }
    fresh.resize(kept);
    const double acceptance =
        static_cast<double>(kept) / static_cast<double>(std::max<std::int64_t>(num_candidates, 1));
    const auto deficit = static_cast<std::size_t>(num_edges) - edges.size();
    if (fresh.size() > deficit) {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> ranked(fresh.size());
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(fresh.size()); ++i) {
        const std::uint64_t key = fresh[static_cast<std::size_t>(i)];
        ranked[static_cast<std::size_t>(i)] = {hash_mix(seed, 0x7217ULL, key), key};
      }
      std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(deficit),
                       ranked.end());
      fresh.resize(deficit);
      for (std::size_t i = 0; i < deficit; ++i) fresh[i] = ranked[i].second;
      std::sort(fresh.begin(), fresh.end());
    }
    if (edges.empty()) {
      edges = std::move(fresh);
    } else {
      // Merge from the back so that no second copy of the (large) edge set is needed.
      std::size_t e = edges.size();
      std::size_t f = fresh.size();
      edges.resize(e + f);
      for (std::size_t out = e + f; f > 0;) {
        if (e > 0 && edges[e - 1] > fresh[f - 1]) {
          edges[--out] = edges[--e];
        } else {
          edges[--out] = fresh[--f];
        }
      }
    }
    const auto remaining = static_cast<double>(num_edges - static_cast<std::int64_t>(edges.size()));
    const double wanted = std::ceil(remaining / std::max(acceptance, 1e-3) * 1.2) + 1024;
    num_candidates = static_cast<std::int64_t>(
        std::min(wanted, static_cast<double>(std::max<std::int64_t>(num_edges, 1 << 20))));
  }
  return edges;
}

// The symmetric in-edge CSR of sorted, distinct undirected edge keys; releases `keys`. Row v is
// {u < v : key (u, v)} followed by {w > v : key (v, w)}, and one ascending scan of the keys emits
// both parts of every row in increasing order, so no row needs sorting (build_graph would sort
// 2 x num_edges ids). Each thread owns a range of rows, scans all keys and writes only its rows:
// no atomics, and the same CSR whatever the thread count.
inline Graph graph_from_keys(std::int64_t num_nodes, std::vector<std::uint64_t>&& keys,
                             const std::string& origin) {
  const auto n = static_cast<std::size_t>(num_nodes);
  const auto m = static_cast<std::int64_t>(keys.size());
  std::vector<EdgeIndex> lower_count(n, 0);  // neighbours below the node
  std::vector<EdgeIndex> offsets(n + 1, 0);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::uint64_t key = keys[static_cast<std::size_t>(i)];
    ++lower_count[static_cast<std::size_t>(key_high(key))];
    ++offsets[static_cast<std::size_t>(key_low(key)) + 1];
  }
  for (std::size_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v] + lower_count[v];
  std::vector<NodeId> sources(static_cast<std::size_t>(offsets[n]));
  const int num_ranges = std::max(1, omp_get_max_threads());
  std::vector<NodeId> range_begin(static_cast<std::size_t>(num_ranges) + 1);
  for (int r = 0; r <= num_ranges; ++r) {
    const EdgeIndex target = offsets[n] * r / num_ranges;
    range_begin[static_cast<std::size_t>(r)] = static_cast<NodeId>(
        std::lower_bound(offsets.begin(), offsets.end() - 1, target) - offsets.begin());
  }
  range_begin[static_cast<std::size_t>(num_ranges)] = static_cast<NodeId>(num_nodes);
#pragma omp parallel for schedule(static, 1)
  for (int r = 0; r < num_ranges; ++r) {
    const NodeId first = range_begin[static_cast<std::size_t>(r)];
    const NodeId last = range_begin[static_cast<std::size_t>(r) + 1];
    std::vector<EdgeIndex> lower_cursor(offsets.begin() + first, offsets.begin() + last);
    std::vector<EdgeIndex> upper_cursor(lower_cursor);
    for (NodeId v = first; v < last; ++v) {
      upper_cursor[static_cast<std::size_t>(v - first)] += lower_count[static_cast<std::size_t>(v)];
    }
    for (std::int64_t i = 0; i < m; ++i) {
      const std::uint64_t key = keys[static_cast<std::size_t>(i)];
      const NodeId low = key_low(key);
      const NodeId high = key_high(key);
      if (high >= first && high < last) {
        sources[static_cast<std::size_t>(lower_cursor[static_cast<std::size_t>(high - first)]++)] =
            low;
      }
      if (low >= first && low < last) {
        sources[static_cast<std::size_t>(upper_cursor[static_cast<std::size_t>(low - first)]++)] =
            high;
      }
    }
  }
  std::vector<std::uint64_t>().swap(keys);
  return Graph(SharedArray(std::move(offsets)), SharedArray(std::move(sources)), origin);
}

}  // namespace gnnbed::detail
