#include <algorithm>

#include "workloads/common/errors.hpp"
#include "workloads/partition.hpp"

namespace gnnbed {
namespace {

// The first dim % num_parts parts hold one column more; part == num_parts gives dim. With more
// parts than columns, parts dim.. hold none.
int column_start(int dim, int num_parts, int part) {
  return part * (dim / num_parts) + std::min(part, dim % num_parts);
}

void check_part(int part, int num_parts) {
  require(part >= 0 && part < num_parts, "part",
          std::to_string(part) + " is outside [0, " + std::to_string(num_parts) + ")");
}

}  // namespace

FeatureColumnSplit::FeatureColumnSplit(int dim, int num_parts) : dim_(dim), num_parts_(num_parts) {
  require(num_parts >= 1, "num_parts", "must be at least 1, got " + std::to_string(num_parts));
  require(dim >= 0, "feature_dim", "must not be negative, got " + std::to_string(dim));
}

int FeatureColumnSplit::begin(int part) const {
  check_part(part, num_parts_);
  return column_start(dim_, num_parts_, part);
}

int FeatureColumnSplit::end(int part) const {
  check_part(part, num_parts_);
  return column_start(dim_, num_parts_, part + 1);
}

std::int64_t FeatureColumnSplit::bytes(int part, std::int64_t num_nodes) const {
  return static_cast<std::int64_t>(width(part)) * num_nodes *
         static_cast<std::int64_t>(sizeof(float));
}

nlohmann::json FeatureColumnSplit::to_json(std::int64_t num_nodes) const {
  nlohmann::json parts = nlohmann::json::array();
  for (int p = 0; p < num_parts_; ++p) {
    parts.push_back({{"part", p},
                     {"column_begin", begin(p)},
                     {"column_end", end(p)},
                     {"width", width(p)},
                     {"bytes", bytes(p, num_nodes)}});
  }
  return {{"dim", dim_}, {"num_parts", num_parts_}, {"num_nodes", num_nodes}, {"parts", parts}};
}

}  // namespace gnnbed
