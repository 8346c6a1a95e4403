#pragma once
// Fitting the caches that the rows an op reads where indices point find (CostModel::caches). A
// row gather or an aggregation whose table outgrows a cache waits on the next level for most of
// its rows, and measured on CPUs that wait follows the rows rather than their bytes. How much of
// each level such rows find beside the op's other operands, and beside the machine's other ranks,
// is not a number a data sheet gives, so calibration fits it: of candidate sizes for a near and a
// far level, the pair whose per-kind fits (fit_op_cost, with the misses of each level as terms)
// leave the least residual.
#include <nlohmann/json.hpp>
#include <span>
#include <utility>
#include <vector>

#include "sim/cost_model/cost_fit.hpp"

namespace gnnbed {

// Sets every sample's cache misses for a rank with `caches` to itself, from the rows it read where
// indices point and their table (CostSample::gathered_rows, gathered_table_bytes).
void set_cache_misses(std::span<CostSample> samples, const CacheSizes& caches);

struct CacheFit {
  CacheSizes per_rank;  // none when no candidate fits better than no cache model
  // Per candidate, no cache model first: the sum over the op kinds whose samples read rows where
  // indices point of their fits' mean squared relative residual.
  std::vector<std::pair<CacheSizes, double>> objective_by_candidate;
  nlohmann::json to_json() const;
};

// The caches calibration tries, sizes 2^(k/2) MiB from 0.5 to 128 MiB: no cache model, one level
// (near only) of each size, and every near level below every far one. With `near_bytes` (a
// core's private cache, as the machine reports it): that near level alone, and with every larger
// far one. Two levels fitted freely can trade one for the other on calibration's tables and then
// disagree on others (a whole partition's 6 MB table between them); the size the hardware states
// exactly is taken from it.
std::vector<CacheSizes> candidate_caches(double near_bytes = 0);

// Of `candidates`, the one whose fits of the op kinds that read rows where indices point are best;
// a later candidate must fit better by a thousandth to be preferred, so the simpler model wins a
// tie. Kinds without such rows fit alike for every candidate and are left out; a candidate for
// which a kind's samples do not determine a fit is passed over.
CacheFit fit_caches(std::span<const std::vector<CostSample>> samples_by_kind,
                    std::span<const CacheSizes> candidates);

}  // namespace gnnbed
