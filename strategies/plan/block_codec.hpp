#pragma once
// Blocks on the wire: what P3 pushes to every machine (the first layer's computation graph) and
// what the simulator counts for it. One int32 stream: num_dst, num_src, num_edges, the source
// node ids (destinations first), every destination's in-degree, then every edge's local source.
// 4 (3 + num_src + num_dst + num_edges) bytes.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "workloads/sampler.hpp"

namespace gnnbed {

std::vector<std::int32_t> encode_block(const Block& block);
std::int64_t encoded_block_bytes(const Block& block);
// Throws Error naming `origin` when the stream is not a well-formed block.
Block decode_block(std::span<const std::int32_t> stream, const std::string& origin);

}  // namespace gnnbed
