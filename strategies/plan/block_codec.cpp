#include "strategies/plan/block_codec.hpp"

#include <limits>

#include "workloads/common/errors.hpp"

namespace gnnbed {

std::vector<std::int32_t> encode_block(const Block& block) {
  if (block.num_edges() > std::numeric_limits<std::int32_t>::max() ||
      block.num_src() > std::numeric_limits<std::int32_t>::max()) {
    throw Error("encode_block: a block with " + std::to_string(block.num_edges()) +
                " edges does not fit the int32 wire format");
  }
  std::vector<std::int32_t> stream;
  stream.reserve(static_cast<std::size_t>(3 + block.num_src() + block.num_dst + block.num_edges()));
  stream.push_back(static_cast<std::int32_t>(block.num_dst));
  stream.push_back(static_cast<std::int32_t>(block.num_src()));
  stream.push_back(static_cast<std::int32_t>(block.num_edges()));
  stream.insert(stream.end(), block.src_nodes.begin(), block.src_nodes.end());
  for (std::int64_t d = 0; d < block.num_dst; ++d) {
    stream.push_back(static_cast<std::int32_t>(block.offsets[static_cast<std::size_t>(d) + 1] -
                                               block.offsets[static_cast<std::size_t>(d)]));
  }
  stream.insert(stream.end(), block.src_index.begin(), block.src_index.end());
  return stream;
}

std::int64_t encoded_block_bytes(const Block& block) {
  return 4 * (3 + block.num_src() + block.num_dst + block.num_edges());
}

Block decode_block(std::span<const std::int32_t> stream, const std::string& origin) {
  auto fail = [&](const std::string& problem) -> Block {
    throw Error(origin + ": not a well-formed block: " + problem);
  };
  if (stream.size() < 3) return fail("shorter than its header");
  const std::int64_t num_dst = stream[0];
  const std::int64_t num_src = stream[1];
  const std::int64_t num_edges = stream[2];
  if (num_dst < 0 || num_src < num_dst || num_edges < 0) return fail("bad counts in the header");
  if (static_cast<std::int64_t>(stream.size()) != 3 + num_src + num_dst + num_edges) {
    return fail("length " + std::to_string(stream.size()) + " does not match its counts");
  }
  Block block;
  block.num_dst = num_dst;
  const auto sources = stream.subspan(3, static_cast<std::size_t>(num_src));
  block.src_nodes.assign(sources.begin(), sources.end());
  block.offsets.assign(static_cast<std::size_t>(num_dst) + 1, 0);
  const auto degrees =
      stream.subspan(static_cast<std::size_t>(3 + num_src), static_cast<std::size_t>(num_dst));
  for (std::size_t d = 0; d < degrees.size(); ++d) {
    if (degrees[d] < 0) return fail("negative degree");
    block.offsets[d + 1] = block.offsets[d] + degrees[d];
  }
  if (block.offsets.back() != num_edges) return fail("degrees do not add up to the edge count");
  const auto edges = stream.subspan(static_cast<std::size_t>(3 + num_src + num_dst));
  block.src_index.assign(edges.begin(), edges.end());
  for (const std::int32_t s : block.src_index) {
    if (s < 0 || s >= num_src) return fail("an edge's source is out of range");
  }
  return block;
}

}  // namespace gnnbed
