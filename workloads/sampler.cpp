#include "workloads/sampler.hpp"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <type_traits>

#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {
namespace {

// Sampled neighbours are written as global ids into the block's src_index and relabelled there
// in place, which needs the two element types to agree.
static_assert(std::is_same_v<NodeId, std::int32_t>);

// Floyd's membership test is a bitmap over the node's in-edges: on the stack up to this many
// 64-bit words (it also yields the picks in order, with no sort), for larger degrees a scan of
// the picks so far when they are few (they fit in a few cache lines), a heap bitmap otherwise.
constexpr std::size_t kStackBitmapWords = 16;
constexpr std::int64_t kLinearScanPicks = 64;

// Destinations are sampled in chunks of this many: enough work per chunk to amortise the
// scheduling, few enough that the chunk's drawn positions stay in the L1/L2 caches.
constexpr std::int64_t kChunkDst = 64;

// How far ahead the loops that look up randomly placed data (neighbour lists, offsets, relabel
// slots) prefetch: those arrays are far larger than the caches, so nearly every lookup misses.
constexpr std::size_t kPrefetchDistance = 64;

std::int64_t sampled_count(std::int64_t degree, int fanout) {
  return (fanout < 0 || degree <= fanout) ? degree : fanout;
}

struct NodeRow {
  EdgeIndex begin;
  EdgeIndex end;
};

// Bitmap scratch for large fanouts; left all-zero between uses.
thread_local std::vector<std::uint64_t> t_pick_bits;

// CSR rows of the destinations being sampled (owned by the thread that calls sample()).
thread_local std::vector<NodeRow> t_rows;

// Edge positions drawn, before the gather reads their neighbour ids.
thread_local std::vector<EdgeIndex> t_positions;

// Floyd's algorithm: draws `picks` distinct positions in [0, degree) with exactly `picks` random
// numbers, whatever the degree, marking them in `bits` (all zero on entry). The generator is taken
// by value: `bits` could alias its state words, which would pin them to memory.
void floyd_into_bitmap(Rng rng, std::uint64_t degree, std::uint64_t picks, std::uint64_t* bits) {
  for (std::uint64_t j = degree - picks; j < degree; ++j) {
    std::uint64_t t = rng.below(j + 1);
    // Every earlier pick is below j, so when t is taken, j is still free.
    if ((bits[t / 64] >> (t % 64)) & 1) t = j;
    bits[t / 64] |= std::uint64_t{1} << (t % 64);
  }
}

// Writes begin + the marked positions, increasing, to `out` and clears `bits`.
void emit_bitmap(std::uint64_t* bits, std::size_t num_words, EdgeIndex begin, EdgeIndex* out) {
  for (std::size_t w = 0; w < num_words; ++w) {
    std::uint64_t word = bits[w];
    bits[w] = 0;
    while (word != 0) {
      *out++ = begin + static_cast<EdgeIndex>(w * 64) + std::countr_zero(word);
      word &= word - 1;
    }
  }
}

// Writes the edge positions (indices into graph.sources(); `row` is the node's slice) of the
// sampled in-neighbours of `node` to out[0 .. sampled_count(degree, fanout)), increasing. Every
// path below makes the same Floyd draws, so which one runs does not
// change the result. Positions first and neighbour ids later lets the caller gather the ids with
// prefetching, which matters: nearly every one of them misses the caches.
void draw_positions(NodeRow row, NodeId node, int fanout, std::uint64_t seed,
                    std::uint64_t batch_key, int hop, EdgeIndex* out) {
  const EdgeIndex begin = row.begin;
  const auto degree = static_cast<std::uint64_t>(row.end - row.begin);
  if (fanout < 0 || degree <= static_cast<std::uint64_t>(fanout)) {
    std::iota(out, out + degree, begin);
    return;
  }
  const auto picks = static_cast<std::uint64_t>(fanout);
  Rng rng(
      hash_mix(seed, batch_key, static_cast<std::uint64_t>(hop), static_cast<std::uint64_t>(node)));
  const auto num_words = static_cast<std::size_t>((degree + 63) / 64);
  if (num_words <= kStackBitmapWords) {
    std::uint64_t bits[kStackBitmapWords];
    std::fill_n(bits, num_words, 0);
    floyd_into_bitmap(rng, degree, picks, bits);
    emit_bitmap(bits, num_words, begin, out);
  } else if (fanout <= kLinearScanPicks) {
    std::uint64_t chosen[kLinearScanPicks];
    std::size_t count = 0;
    for (std::uint64_t j = degree - picks; j < degree; ++j) {
      const std::uint64_t t = rng.below(j + 1);
      const bool taken = std::find(chosen, chosen + count, t) != chosen + count;
      chosen[count++] = taken ? j : t;
    }
    std::sort(chosen, chosen + count);
    for (std::size_t i = 0; i < count; ++i) out[i] = begin + static_cast<EdgeIndex>(chosen[i]);
  } else {
    if (t_pick_bits.size() < num_words) t_pick_bits.resize(num_words, 0);
    floyd_into_bitmap(rng, degree, picks, t_pick_bits.data());
    emit_bitmap(t_pick_bits.data(), num_words, begin, out);
  }
}

// out[i] = sources[positions[i]] for i < count, prefetching ahead.
void gather_sources(const NodeId* sources, const EdgeIndex* positions, std::size_t count,
                    NodeId* out) {
  for (std::size_t i = 0; i < count; ++i) {
    if (i + kPrefetchDistance < count) {
      __builtin_prefetch(sources + positions[i + kPrefetchDistance]);
    }
    out[i] = sources[positions[i]];
  }
}

constexpr std::uint64_t kGenerationMask = ~std::uint64_t{0xffffffff};
constexpr std::uint64_t kLocalIdMask = 0xffffffff;

// Global id -> local id of the block being built. A slot holds (generation << 32 | local id) and
// counts only when its generation is current, so starting a block is O(1) instead of clearing
// num_nodes entries; one slot per node keeps a lookup to a single cache miss.
class LocalIds {
 public:
  LocalIds() = default;
  LocalIds(const LocalIds&) = delete;
  LocalIds& operator=(const LocalIds&) = delete;
  ~LocalIds() {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  }

  void begin_block(std::int64_t num_nodes) {
    const auto n = static_cast<std::size_t>(num_nodes);
    if (capacity_ < n) grow(n);
    if (++generation_ == 0) {
      std::fill_n(slots_, capacity_, 0);
      generation_ = 1;
    }
    tag_ = static_cast<std::uint64_t>(generation_) << 32;
  }
  std::uint64_t* slots() { return slots_; }
  std::uint64_t tag() const { return tag_; }

 private:
  // The slots are looked up at random, so they sit on 2 MiB pages where the kernel allows: with
  // 4 KiB pages nearly every lookup would also miss the TLB. Fresh anonymous memory reads as
  // zero, which is generation 0, "never used".
  void grow(std::size_t n) {
    constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
    const std::size_t bytes = n * sizeof(std::uint64_t);
    void* mapping = mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) {
      throw SystemError("neighbour sampler: cannot map " + std::to_string(bytes) +
                        " bytes of relabelling scratch for " + std::to_string(n) + " nodes");
    }
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
    mapping_ = mapping;
    mapping_bytes_ = bytes + kHugePageBytes;
    const auto address = reinterpret_cast<std::uintptr_t>(mapping);
    const std::uintptr_t aligned = (address + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    slots_ = reinterpret_cast<std::uint64_t*>(aligned);
    madvise(slots_, bytes, MADV_HUGEPAGE);  // a hint: without huge pages it is only slower
    capacity_ = n;
    generation_ = 0;
  }

  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  std::uint64_t* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint32_t generation_ = 0;
  std::uint64_t tag_ = 0;
};

// Owned by the calling thread (relabelling is sequential), so concurrent sample() calls on
// different threads never share one.
thread_local LocalIds t_local_ids;

// What sampling reads of the graph, looked up once per batch.
struct GraphView {
  const Graph& graph;
  std::span<const EdgeIndex> offsets;
  // Null for an implicit graph, whose drawn neighbours are computed destination by destination.
  const NodeId* sources;
  bool check_gathered;
};

// One hop being sampled: its destinations (`frontier`), their CSR rows and slices of the block's
// edges (`offsets`), what decides the random draws, and where the drawn neighbours go.
struct HopSampling {
  const GraphView& graph;
  std::span<const NodeId> frontier;
  const NodeRow* rows;
  const std::int64_t* offsets;
  NodeId* sampled;  // the block's src_index: global ids, relabelled in place
  int fanout;
  std::uint64_t seed;
  std::uint64_t batch_key;
  int hop;
};

void check_seeds_in_graph(std::span<const NodeId> seeds, std::int64_t num_nodes) {
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    if (seeds[i] < 0 || seeds[i] >= num_nodes) {
      throw ConfigError("seeds", "seed " + std::to_string(i) + " is node " +
                                     std::to_string(seeds[i]) + ", outside [0, " +
                                     std::to_string(num_nodes) + ")");
    }
  }
}

// Destinations keep their positions as local ids (DGL's to_block numbering).
void number_destinations(std::span<const NodeId> frontier, std::uint64_t* slots,
                         std::uint64_t tag) {
  const auto num_dst = static_cast<std::int64_t>(frontier.size());
  for (std::int64_t d = 0; d < num_dst; ++d) {
    const NodeId v = frontier[static_cast<std::size_t>(d)];
    std::uint64_t& slot = slots[v];
    if ((slot & kGenerationMask) == tag) {
      throw ConfigError("seeds", "node " + std::to_string(v) + " is seed " +
                                     std::to_string(slot & kLocalIdMask) + " and seed " +
                                     std::to_string(d) + " (seeds must be distinct)");
    }
    slot = tag | static_cast<std::uint64_t>(d);
  }
}

// Per-destination counts and a prefix sum into offsets[0 .. num_dst]: every destination draws
// into its own slice, so the layout, and with it the result, is the same for any thread count.
// The destinations' CSR rows go to `rows`, read once here: a second random lookup in the drawing
// loop would miss the caches again.
void count_sampled_edges(std::span<const EdgeIndex> graph_offsets, std::span<const NodeId> frontier,
                         int fanout, NodeRow* rows, std::int64_t* offsets) {
  const auto num_dst = static_cast<std::int64_t>(frontier.size());
  // Sequential: a parallel loop here would add a second fork-join per hop, and each one stalls
  // for a whole scheduler slice when another process holds one of the cores.
  for (std::int64_t d = 0; d < num_dst; ++d) {
    const auto ahead = static_cast<std::size_t>(d) + kPrefetchDistance;
    if (ahead < frontier.size()) __builtin_prefetch(graph_offsets.data() + frontier[ahead]);
    const auto v = static_cast<std::size_t>(frontier[static_cast<std::size_t>(d)]);
    rows[d] = {graph_offsets[v], graph_offsets[v + 1]};
    offsets[d + 1] = sampled_count(rows[d].end - rows[d].begin, fanout);
  }
  std::inclusive_scan(offsets, offsets + num_dst + 1, offsets);
}

// Draws a chunk of destinations: positions, then the gather of their neighbour ids.
void draw_chunk(const HopSampling& h, std::int64_t chunk) {
  const std::int64_t* offsets = h.offsets;
  NodeId* sampled = h.sampled;
  const std::int64_t first = chunk * kChunkDst;
  const std::int64_t last =
      std::min(static_cast<std::int64_t>(h.frontier.size()), first + kChunkDst);
  const auto chunk_edges = static_cast<std::size_t>(offsets[last] - offsets[first]);
  if (t_positions.size() < chunk_edges) t_positions.resize(chunk_edges);
  for (std::int64_t d = first; d < last; ++d) {
    draw_positions(h.rows[d], h.frontier[static_cast<std::size_t>(d)], h.fanout, h.seed,
                   h.batch_key, h.hop, t_positions.data() + (offsets[d] - offsets[first]));
  }
  if (h.graph.sources == nullptr) {
    for (std::int64_t d = first; d < last; ++d) {
      const EdgeIndex* positions = t_positions.data() + (offsets[d] - offsets[first]);
      h.graph.graph.sources_at(
          h.frontier[static_cast<std::size_t>(d)],
          std::span<const EdgeIndex>(positions,
                                     static_cast<std::size_t>(offsets[d + 1] - offsets[d])),
          sampled + offsets[d]);
    }
    return;
  }
  gather_sources(h.graph.sources, t_positions.data(), chunk_edges, sampled + offsets[first]);
  if (h.graph.check_gathered) {
    h.graph.graph.check_gathered(t_positions.data(), sampled + offsets[first], chunk_edges);
  }
}

// Relabels a chunk: each new source gets the next local id in order of first appearance.
// The prefetches stay inside the chunk, whose ids are final; the next one may be mid-draw.
void relabel_chunk(const HopSampling& h, std::int64_t chunk, std::uint64_t* slots,
                   std::uint64_t tag, std::vector<NodeId>& src_nodes) {
  const std::int64_t* offsets = h.offsets;
  NodeId* sampled = h.sampled;
  const auto num_dst = static_cast<std::int64_t>(h.frontier.size());
  const auto begin = static_cast<std::size_t>(offsets[chunk * kChunkDst]);
  const auto end = static_cast<std::size_t>(offsets[std::min(num_dst, (chunk + 1) * kChunkDst)]);
  for (std::size_t e = begin; e < end; ++e) {
    if (e + kPrefetchDistance < end) {
      __builtin_prefetch(slots + sampled[e + kPrefetchDistance], 1);
    }
    const NodeId u = sampled[e];
    std::uint64_t& slot = slots[u];
    if ((slot & kGenerationMask) != tag) {
      slot = tag | static_cast<std::uint64_t>(src_nodes.size());
      src_nodes.push_back(u);
    }
    sampled[e] = static_cast<NodeId>(slot & kLocalIdMask);
  }
}

// Relabelling is sequential (first-appearance order), drawing is not. Thread 0 relabels the
// chunks in order as they complete, drawing chunks itself while the next one is not ready;
// the other threads draw chunks in claim order. On one thread this is draw, relabel, draw...
void draw_and_relabel(const HopSampling& h, std::uint64_t* slots, std::uint64_t tag,
                      std::vector<NodeId>& src_nodes) {
  const auto num_chunks =
      (static_cast<std::int64_t>(h.frontier.size()) + kChunkDst - 1) / kChunkDst;
  const auto ready =
      std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(num_chunks));
  std::atomic<std::int64_t> next_chunk{0};
  // A bad id in a graph checked on use throws while drawing: an exception may not leave a
  // parallel region, so the first one is kept, relabelling stops, and it is rethrown after.
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto draw_next_chunk = [&]() {
    const std::int64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (chunk >= num_chunks) return false;
    try {
      draw_chunk(h, chunk);
    } catch (...) {
#pragma omp critical(gnnbed_sampler_failure)
      if (!failure) failure = std::current_exception();
      failed.store(true, std::memory_order_release);
    }
    ready[static_cast<std::size_t>(chunk)].store(1, std::memory_order_release);
    return true;
  };
#pragma omp parallel if (num_chunks > 1)
  {
    if (omp_get_thread_num() != 0) {
      while (draw_next_chunk()) {
      }
    } else {
      for (std::int64_t chunk = 0; chunk < num_chunks; ++chunk) {
        while (ready[static_cast<std::size_t>(chunk)].load(std::memory_order_acquire) == 0) {
          if (next_chunk.load(std::memory_order_relaxed) >= num_chunks || !draw_next_chunk()) {
            std::this_thread::yield();
          }
        }
        if (failed.load(std::memory_order_acquire)) break;
        relabel_chunk(h, chunk, slots, tag, src_nodes);
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// Samples one hop into `block`: the destinations are `frontier`, each with its sampled
// in-neighbours, numbered destinations first, then new sources in order of first appearance.
void sample_hop(const GraphView& graph, std::span<const NodeId> frontier, int fanout,
                std::uint64_t seed, std::uint64_t batch_key, int hop, Block& block) {
  const std::int64_t num_nodes = graph.graph.num_nodes();
  const auto num_dst = static_cast<std::int64_t>(frontier.size());
  block.num_dst = num_dst;
  LocalIds& local_ids = t_local_ids;
  local_ids.begin_block(num_nodes);
  std::uint64_t* slots = local_ids.slots();
  const std::uint64_t tag = local_ids.tag();
  number_destinations(frontier, slots, tag);

  block.offsets.assign(static_cast<std::size_t>(num_dst) + 1, 0);
  std::int64_t* offsets = block.offsets.data();
  if (t_rows.size() < static_cast<std::size_t>(num_dst)) {
    t_rows.resize(static_cast<std::size_t>(num_dst));
  }
  count_sampled_edges(graph.offsets, frontier, fanout, t_rows.data(), offsets);
  const std::int64_t num_edges = offsets[num_dst];
  block.src_index.resize(static_cast<std::size_t>(num_edges));
  block.src_nodes.reserve(
      static_cast<std::size_t>(std::min(num_dst + num_edges, std::max(num_nodes, num_dst))));
  block.src_nodes.assign(frontier.begin(), frontier.end());
  const HopSampling sampling{graph,  frontier, t_rows.data(), offsets, block.src_index.data(),
                             fanout, seed,     batch_key,     hop};
  draw_and_relabel(sampling, slots, tag, block.src_nodes);
}

}  // namespace

Block full_graph_block(const Graph& graph) {
  Block block;
  const auto n = static_cast<std::size_t>(graph.num_nodes());
  block.src_nodes.resize(n);
  std::iota(block.src_nodes.begin(), block.src_nodes.end(), NodeId{0});
  block.num_dst = graph.num_nodes();
  block.offsets.assign(graph.offsets().begin(), graph.offsets().end());
  block.src_index.assign(graph.sources().begin(), graph.sources().end());
  return block;
}

Block make_block(std::span<const NodeId> dst_nodes, std::span<const std::int64_t> offsets,
                 std::span<const NodeId> neighbors) {
  if (offsets.size() != dst_nodes.size() + 1 || offsets.front() != 0 ||
      offsets.back() != static_cast<std::int64_t>(neighbors.size())) {
    throw Error("make_block: offsets do not match " + std::to_string(dst_nodes.size()) +
                " destinations and " + std::to_string(neighbors.size()) + " neighbours");
  }
  Block block;
  block.num_dst = static_cast<std::int64_t>(dst_nodes.size());
  block.offsets.assign(offsets.begin(), offsets.end());
  block.src_nodes.assign(dst_nodes.begin(), dst_nodes.end());
  block.src_index.resize(neighbors.size());
  // Sort-based relabelling (O(E log E)): this assembles blocks from neighbours drawn on other
  // ranks, off the single-process sampler's hot path.
  std::vector<std::pair<NodeId, std::int32_t>> destinations;
  destinations.reserve(dst_nodes.size());
  for (std::size_t d = 0; d < dst_nodes.size(); ++d) {
    destinations.emplace_back(dst_nodes[d], static_cast<std::int32_t>(d));
  }
  std::sort(destinations.begin(), destinations.end());
  for (std::size_t d = 1; d < destinations.size(); ++d) {
    if (destinations[d].first == destinations[d - 1].first) {
      throw ConfigError(
          "seeds", "node " + std::to_string(destinations[d].first) + " is a destination twice");
    }
  }
  std::vector<std::pair<NodeId, std::int64_t>> uses;  // (neighbour, edge position)
  uses.reserve(neighbors.size());
  for (std::size_t e = 0; e < neighbors.size(); ++e) {
    uses.emplace_back(neighbors[e], static_cast<std::int64_t>(e));
  }
  std::sort(uses.begin(), uses.end());
  // First appearance of every neighbour that is not a destination.
  std::vector<std::pair<std::int64_t, NodeId>> new_sources;
  for (std::size_t i = 0; i < uses.size(); ++i) {
    if (i > 0 && uses[i].first == uses[i - 1].first) continue;
    const auto match = std::lower_bound(destinations.begin(), destinations.end(),
                                        std::pair<NodeId, std::int32_t>(uses[i].first, -1));
    if (match == destinations.end() || match->first != uses[i].first) {
      new_sources.emplace_back(uses[i].second, uses[i].first);
    }
  }
  std::sort(new_sources.begin(), new_sources.end());
  std::vector<std::pair<NodeId, std::int32_t>> local_of = destinations;
  for (const auto& [first_use, u] : new_sources) {
    local_of.emplace_back(u, static_cast<std::int32_t>(block.src_nodes.size()));
    block.src_nodes.push_back(u);
  }
  std::sort(local_of.begin(), local_of.end());
  for (const auto& [u, e] : uses) {
    const auto match =
        std::lower_bound(local_of.begin(), local_of.end(), std::pair<NodeId, std::int32_t>(u, -1));
    block.src_index[static_cast<std::size_t>(e)] = match->second;
  }
  return block;
}

void sample_in_neighbors(const Graph& graph, NodeId node, int fanout, std::uint64_t seed,
                         std::uint64_t batch_key, int hop, std::vector<NodeId>& out) {
  if (node < 0 || node >= graph.num_nodes()) {
    throw ConfigError("node", "node " + std::to_string(node) + " is outside [0, " +
                                  std::to_string(graph.num_nodes()) + ")");
  }
  const auto count = static_cast<std::size_t>(sampled_count(graph.in_degree(node), fanout));
  if (t_positions.size() < count) t_positions.resize(count);
  const auto v = static_cast<std::size_t>(node);
  draw_positions(NodeRow{graph.offsets()[v], graph.offsets()[v + 1]}, node, fanout, seed, batch_key,
                 hop, t_positions.data());
  const std::size_t old_size = out.size();
  out.resize(old_size + count);
  graph.sources_at(node, std::span<const EdgeIndex>(t_positions.data(), count),
                   out.data() + old_size);
}

NeighborSampler::NeighborSampler(const Graph& graph, std::vector<int> fanouts, std::uint64_t seed)
    : graph_(&graph), fanouts_(std::move(fanouts)), seed_(seed) {
  require(!fanouts_.empty(), "fanouts", "is empty (needs one fanout per layer)");
  for (std::size_t hop = 0; hop < fanouts_.size(); ++hop) {
    require(fanouts_[hop] > 0 || fanouts_[hop] == -1, "fanouts",
            "hop " + std::to_string(hop) + " has fanout " + std::to_string(fanouts_[hop]) +
                " (must be positive, or -1 for the full neighbourhood)");
  }
}

MiniBatch NeighborSampler::sample(std::span<const NodeId> seeds, std::uint64_t batch_key) const {
  const Graph& graph = *graph_;
  const NodeId* graph_sources = graph.stored_sources();
  const GraphView view{graph, graph.offsets(), graph_sources,
                       graph_sources != nullptr && graph.sources_need_checking()};
  check_seeds_in_graph(seeds, graph.num_nodes());

  MiniBatch batch;
  batch.seeds.assign(seeds.begin(), seeds.end());
  const int num_hops = num_layers();
  batch.blocks.resize(static_cast<std::size_t>(num_hops));
  std::span<const NodeId> frontier = batch.seeds;
  for (int hop = 0; hop < num_hops; ++hop) {
    Block& block = batch.blocks[static_cast<std::size_t>(num_hops - 1 - hop)];
    sample_hop(view, frontier, fanouts_[static_cast<std::size_t>(hop)], seed_, batch_key, hop,
               block);
    frontier = block.src_nodes;
  }
  return batch;
}

}  // namespace gnnbed
