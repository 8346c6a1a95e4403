#include "strategies/sancus_bounds.hpp"

#include <cmath>
#include <limits>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// The draws of SCS-H's decisions in the simulator: their own stream of the training seed.
constexpr std::uint64_t kSancusDrawStream = 0x5a4c05b0a7cULL;

// The carried state: [layers, ranks, plans so far, stale epochs per layer, decisions per layer and
// rank].
constexpr std::size_t kStateHeader = 3;
constexpr std::size_t kPlansSlot = 2;
constexpr std::span<const float> kNoBlock;

// SCS-H: the block of `layer` changed beyond the threshold since its peers' copy.
bool changed_beyond_threshold(const SancusOptions& options, const StrategyContext& context,
                              const RankIteration& iteration, int layer) {
  if (iteration.persistent_values) {
    const auto& values = iteration.persistent_values;
    // The plans alternate between the two kept blocks: the one before the last exists from the
    // rank's third plan on.
    const bool has_step = iteration.carried_state.at(kPlansSlot) >= 2;
    return predicted_change(
               values(computed_block_name(layer, iteration.epoch - 1)),
               has_step ? values(computed_block_name(layer, iteration.epoch - 2)) : kNoBlock,
               values(sent_block_name(layer))) > options.change_threshold;
  }
  if (!options.broadcast_fraction) {
    throw ConfigError("distribution.sancus_broadcast_fraction",
                      "must be set to simulate the change bound: the simulator computes no values "
                      "to measure a block's change from (a run's activation bytes per epoch, "
                      "against those of broadcasting every epoch, give the share)");
  }
  const std::uint64_t draw = hash_mix(
      context.training.seed, kSancusDrawStream, static_cast<std::uint64_t>(iteration.epoch),
      static_cast<std::uint64_t>(iteration.rank), static_cast<std::uint64_t>(layer));
  return unit_double(draw) < *options.broadcast_fraction;
}

// Whether the rank broadcasts its block of `layer` (>= 1), its state carried from the epoch before.
bool broadcasts_layer(const SancusOptions& options, const StrategyContext& context,
                      const RankIteration& iteration, int layer) {
  switch (options.bound) {
    case SancusBound::epochs:
      return options.broadcasts(iteration.epoch);
    case SancusBound::adaptive:
      return iteration.carried_state.at(kStateHeader + static_cast<std::size_t>(layer)) >=
             options.staleness_epochs;
    case SancusBound::change:
      return changed_beyond_threshold(options, context, iteration, layer);
  }
  return true;
}

}  // namespace

std::vector<char> own_broadcasts(const SancusOptions& options, const StrategyContext& context,
                                 const RankIteration& iteration) {
  const int num_layers = context.model.num_layers();
  std::vector<char> own(static_cast<std::size_t>(num_layers), 1);
  // The run's first plan sends every block: the peers hold no copy yet.
  if (!options.skips() || iteration.carried_state.empty()) return own;
  own[0] = 0;
  for (int l = 1; l < num_layers; ++l) {
    own[static_cast<std::size_t>(l)] = broadcasts_layer(options, context, iteration, l) ? 1 : 0;
  }
  return own;
}

Announcement with_broadcasts(const Announcement& halo, const std::vector<char>& own, int rank) {
  std::vector<std::vector<std::int32_t>> payloads(halo.size());
  for (std::size_t q = 0; q < halo.size(); ++q) {
    if (static_cast<int>(q) == rank) continue;
    payloads[q].assign(own.begin(), own.end());
    payloads[q].insert(payloads[q].end(), halo[q].begin(), halo[q].end());
  }
  return Announcement(std::move(payloads));
}

DecodedAnnouncements decode_broadcasts(const Announcement& sent, const Announcement& received,
                                       int rank, int num_layers) {
  const std::size_t num_ranks = received.size();
  const auto layers = static_cast<std::size_t>(num_layers);
  DecodedAnnouncements decoded{SancusBroadcasts(layers, std::vector<char>(num_ranks, 1)),
                               Announcement(num_ranks), Announcement(num_ranks)};
  for (std::size_t q = 0; q < num_ranks; ++q) {
    if (static_cast<int>(q) == rank) continue;
    for (const auto& [from, into, whose] :
         {std::tuple{&sent, &decoded.sent, rank},
          std::tuple{&received, &decoded.received, static_cast<int>(q)}}) {
      const std::vector<std::int32_t>& payload = (*from)[q];
      if (payload.size() < layers) {
        throw Error("sancus: rank " + std::to_string(whose) + "'s announcement to rank " +
                    std::to_string(whose == rank ? static_cast<int>(q) : rank) + " holds " +
                    std::to_string(payload.size()) + " values, fewer than its " +
                    std::to_string(num_layers) + " layers' decisions");
      }
      for (std::size_t l = 0; l < layers; ++l) {
        decoded.broadcasts[l][static_cast<std::size_t>(whose)] = payload[l] != 0 ? 1 : 0;
      }
      into->set(q, std::make_shared<const std::vector<std::int32_t>>(
                       payload.begin() + static_cast<std::ptrdiff_t>(layers), payload.end()));
    }
  }
  return decoded;
}

std::vector<std::int32_t> next_sancus_state(const RankIteration& iteration,
                                            const SancusBroadcasts& broadcasts,
                                            const std::vector<char>& reads_from) {
  const std::size_t layers = broadcasts.size();
  const std::size_t num_ranks = reads_from.size();
  const auto rank = static_cast<std::size_t>(iteration.rank);
  const std::int32_t plans_before =
      iteration.carried_state.size() > kPlansSlot ? iteration.carried_state[kPlansSlot] : 0;
  std::vector<std::int32_t> state = {static_cast<std::int32_t>(layers),
                                     static_cast<std::int32_t>(num_ranks), plans_before + 1};
  for (std::size_t l = 0; l < layers; ++l) {
    const std::size_t slot = kStateHeader + l;
    std::int32_t stale = broadcasts[l][rank] != 0 || iteration.carried_state.size() <= slot
                             ? 0
                             : iteration.carried_state[slot];
    bool read_stale = false;
    for (std::size_t q = 0; q < num_ranks; ++q) read_stale |= reads_from[q] && !broadcasts[l][q];
    state.push_back(stale + (read_stale ? 1 : 0));
  }
  for (const auto& layer : broadcasts) state.insert(state.end(), layer.begin(), layer.end());
  return state;
}

SancusBroadcasts broadcasts_in_state(std::span<const std::int32_t> state) {
  if (state.size() < kStateHeader) return {};
  const auto layers = static_cast<std::size_t>(state[0]);
  const auto num_ranks = static_cast<std::size_t>(state[1]);
  if (state.size() != kStateHeader + layers + layers * num_ranks) {
    throw Error("sancus: a carried state of " + std::to_string(state.size()) +
                " values does not hold " + std::to_string(layers) + " layers of " +
                std::to_string(num_ranks) + " ranks");
  }
  SancusBroadcasts broadcasts(layers, std::vector<char>(num_ranks));
  const std::int32_t* decisions = state.data() + kStateHeader + layers;
  for (std::size_t l = 0; l < layers; ++l) {
    for (std::size_t q = 0; q < num_ranks; ++q) {
      broadcasts[l][q] = decisions[l * num_ranks + q] != 0 ? 1 : 0;
    }
  }
  return broadcasts;
}

std::string computed_block_name(int layer, int epoch) {
  return "layer" + std::to_string(layer) + " own block as computed in " +
         (epoch % 2 == 0 ? "even" : "odd") + " epochs";
}

std::string sent_block_name(int layer) {
  return "layer" + std::to_string(layer) + " own block as sent";
}

double predicted_change(std::span<const float> last, std::span<const float> before,
                        std::span<const float> sent) {
  if (last.empty() || last.size() != sent.size()) return std::numeric_limits<double>::infinity();
  const bool has_step = before.size() == last.size();
  double drift = 0;
  double step = 0;
  double reference = 0;
  for (std::size_t i = 0; i < last.size(); ++i) {
    const double value = last[i];
    drift += (value - sent[i]) * (value - sent[i]);
    if (has_step) step += (value - before[i]) * (value - before[i]);
    reference += static_cast<double>(sent[i]) * sent[i];
  }
  const double change = std::sqrt(drift) + std::sqrt(step);
  if (reference == 0) return change == 0 ? 0 : std::numeric_limits<double>::infinity();
  return change / std::sqrt(reference);
}

}  // namespace gnnbed
