#pragma once
// GCN normalises an edge s -> d by the degrees of s and d in the whole graph. A rank holding only
// its own nodes' in-edges cannot count its halo's degrees alone: every rank counts what its
// in-edges contribute, the owners add up their nodes' counts and share them.
#include <cstdint>
#include <vector>

#include "exec/distributed/local_store.hpp"
#include "exec/transport.hpp"

namespace gnnbed {

// Collective. Every node's GCN degree in the whole graph (its out-edges plus a self loop, as
// gcn_degrees counts it on the whole graph), indexed by node id; counted as structure traffic.
std::vector<std::int32_t> global_gcn_degrees(const LocalStore& store, Transport& transport);

}  // namespace gnnbed
