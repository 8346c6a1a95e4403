#pragma once
// The sparse operators GNN layers multiply by, built from a block's edges alone (no global
// information), so that any rank holding the block can build them. They read the block's edges in
// place (cpu::ScaledAdjacency): the block must outlive them, unchanged.
#include <cstdint>
#include <vector>

#include "exec/kernels/cpu_kernels.hpp"
#include "workloads/sampler.hpp"

namespace gnnbed {

// Mean over each destination's in-edges: weight 1 / in-degree (a destination without edges
// aggregates to zero). num_dst x num_src.
cpu::ScaledAdjacency mean_aggregation(const Block& block);

// Kipf & Welling's symmetric normalisation with self loops, on the block: every destination d gets
// a self loop, and edge s -> d weighs 1 / sqrt(deg_in(d) * deg_out(s)) where deg_in counts d's
// block in-edges plus its self loop and deg_out counts s's block out-edges plus its self loop
// (when s is a destination). On a full-graph block of an undirected graph this is exactly
// D^-1/2 (A + I) D^-1/2. The weight is 1 / sqrt(deg_in(d)) times 1 / sqrt(deg_out(s)), each
// rounded to float. num_dst x num_src.
cpu::ScaledAdjacency gcn_aggregation(const Block& block);

// The source degrees gcn_aggregation normalises by: the block's source_degrees when it carries
// them (a rank's share of a full graph), else per source node its block out-edges plus one when
// it is a destination.
std::vector<std::int32_t> gcn_source_degrees(const Block& block);

}  // namespace gnnbed
