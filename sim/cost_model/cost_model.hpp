#pragma once
// The cost model of compute ops: for each op kind, time = fixed cost + sum over its kinds of work
// of work / rate (docs/design.md, "The fidelity loop"). The work of an op is what the plan says
// about it: dense and sparse FLOPs, bytes moved through memory, sampled edges, nodes planned, and
// the rows it reads where indices point that the rank's caches cannot hold (each a wait on the
// next level, whatever its width: measured, a row gather's time follows its rows, not its bytes).
// Cluster presets give rates for their devices; calibration fits them on the machine at hand.
// Communication ops are not costed here: the simulator moves their bytes over modelled links.
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "strategies/plan/plan.hpp"

namespace gnnbed {

// The quantities an op's time is linear in.
struct OpWork {
  double dense_flops = 0;
  double sparse_flops = 0;
  double memory_bytes = 0;
  double sampled_edges = 0;
  double planned_nodes = 0;
  double sparse_entries = 0;
  // Rows read where indices point that miss the near cache (and wait on the far one), and that
  // miss the far one too (and wait on main memory): CacheSizes.
  double near_cache_misses = 0;
  double far_cache_misses = 0;

  OpWork& operator+=(const OpWork& other);
};

// The caches that rows read where indices point find: a near level, whose misses wait on the far
// one, and a far level, whose misses wait on main memory (in bytes; 0: the level is not
// modelled). Not a data sheet's sizes: what such rows find beside an op's other operands, as
// calibration fits it (sim/cost_model/cache_fit.hpp).
// How many ranks share each level: the near level (a core's private cache) the ranks that run at
// once, the far one every rank that keeps data in it.
struct CacheSharers {
  int near = 1;
  int far = 1;
};

struct CacheSizes {
  double near_bytes = 0;
  double far_bytes = 0;
  // What each rank sharing these caches has of them.
  CacheSizes shared_by(const CacheSharers& sharers) const;
  bool operator==(const CacheSizes&) const = default;
};

// The share of rows read at random from a table of `table_bytes` that a cache of `cache_bytes`
// does not hold: 1 - cache / table for a larger table (every row as likely, the cache holding
// what was read last), else 0; 0 without a cache model (`cache_bytes` 0).
double uncached_fraction(double table_bytes, double cache_bytes);

// Sets `work`'s cache misses: of `rows` read where indices point in a table of `table_bytes`,
// those each level of `caches` does not hold.
void set_cache_misses(OpWork& work, double rows, double table_bytes, const CacheSizes& caches);

// The work of `op` on a rank with `caches` to itself (none by default: no cache misses).
OpWork work_of(const Op& op, const CacheSizes& caches = {});

// time = fixed_seconds + dense_flops / dense_flops_per_second + ... ; a rate of 0 means the term
// does not apply (its work must then be 0, or the cost is undefined and seconds() throws). The
// exceptions are sparse_entries and cache misses: without a rate, their cost is taken to be in
// the other terms' (as in cost models fitted before they were counted, and device models whose
// caches are not modelled).
struct OpCost {
  double fixed_seconds = 0;
  double dense_flops_per_second = 0;
  double sparse_flops_per_second = 0;
  double memory_bytes_per_second = 0;
  double sampled_edges_per_second = 0;
  double planned_nodes_per_second = 0;
  double sparse_entries_per_second = 0;
  double near_cache_misses_per_second = 0;
  double far_cache_misses_per_second = 0;

  double seconds(const OpWork& work) const { return fixed_seconds + work_seconds(work); }
  // The terms of `work` alone, without the fixed cost.
  double work_seconds(const OpWork& work) const;
  nlohmann::json to_json() const;
  static OpCost from_json(const nlohmann::json& object, const std::string& where);
};

class CostModel {
 public:
  void set(OpKind kind, const OpCost& cost) { costs_[static_cast<std::size_t>(kind)] = cost; }
  const std::optional<OpCost>& cost(OpKind kind) const {
    return costs_[static_cast<std::size_t>(kind)];
  }
  // The caches that the ranks of one machine (or one device) share for the rows their ops read
  // where indices point; none by default. A rank has its share of them.
  const CacheSizes& caches() const { return caches_; }
  void set_caches(const CacheSizes& caches) { caches_ = caches; }

  // The op on a rank that shares the caches with others as `sharers` says. Throws Error naming the
  // op when its kind has no entry.
  double seconds(const Op& op, const CacheSharers& sharers = {}) const;

  // {"caches": {"near_bytes": ..., "far_bytes": ...}, "layer_forward": {"fixed_seconds": ...,
  // "dense_flops_per_second": ...}, ...}; unknown op kinds and fields are rejected with
  // ConfigError naming them (`where` prefixes the field).
  nlohmann::json to_json() const;
  static CostModel from_json(const nlohmann::json& object, const std::string& where);
  // Entries of `overrides` replace this model's, and its caches where it models any.
  void merge(const CostModel& overrides);

 private:
  std::array<std::optional<OpCost>, kNumOpKinds> costs_;
  CacheSizes caches_;
};

// True for op kinds the cost model times (everything but collectives, sends, receives and device
// copies, which engines move as bytes).
bool is_costed(OpKind kind);

// What calibration measured on one machine: the cost model of its CPU ranks and the effective
// point-to-point performance of its MPI transport.
struct NetworkCalibration {
  double latency_seconds = 0;             // per message, software included
  double bandwidth_bytes_per_second = 0;  // large messages, one pair of ranks
  nlohmann::json to_json() const;
  static NetworkCalibration from_json(const nlohmann::json& object, const std::string& where);
};

// The widest rank speed spread the simulator models (ClusterSpec::rank_speed_spread): at 1024
// ranks the fastest is 3.2 standard deviations below the mean, and 0.25 leaves it 0.2.
inline constexpr double kLargestRankSpeedSpread = 0.25;

struct Calibration {
  CostModel cost_model;
  NetworkCalibration network;
  // How much the calibrating ranks' compute times differed in the iterations they ran together
  // (the simulator's ClusterSpec::rank_speed_spread); 0 when calibration ran one rank. At most
  // kLargestRankSpeedSpread: a wider spread measured (a machine loaded by other work while it
  // calibrated) is recorded at that edge, the measurement kept in `fits`.
  double rank_speed_spread = 0;
  // How much one op's time varied from run to run on one rank, beyond what all ranks shared (the
  // simulator's ClusterSpec::compute_jitter); 0 when calibration ran one rank.
  double compute_jitter = 0;
  // Copies from page-locked host memory to the calibrating rank's GPU (calibrate --device cuda):
  // the simulator's device link. Absent when calibration ran on CPUs.
  std::optional<NetworkCalibration> device_link;
  nlohmann::json fits;        // per op kind: samples, fitted values and residuals
  nlohmann::json provenance;  // command, git revision, machine
  nlohmann::json to_json() const;
};

// Blom's approximation of the expected `position`-th smallest (from 0) of `count` standard normal
// draws: where rank `position` of `count` falls among ranks whose compute times spread
// (ClusterSpec::rank_speed_spread). 0 for a single draw.
double normal_order_score(int position, int count);

// Files are JSON ({"format": "gnnbed-calibration", "version": 1, ...}); reading names the file
// and field at fault; writing is atomic.
Calibration read_calibration(const std::filesystem::path& path);
void write_calibration(const Calibration& calibration, const std::filesystem::path& path);

}  // namespace gnnbed
