#include "workloads/sparse_section.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed {

// The CSR arrays of sparse features, one after the other (FeatureKind::sparse).
SectionPayload sparse_features_payload(const SparseFeatures& features) {
  const std::span<const std::byte> parts[] = {section_bytes(features.offsets()),
                                              section_bytes(features.columns()),
                                              section_bytes(features.values())};
  std::uint64_t length = 0;
  for (const auto& part : parts) length += part.size();
  return {length, [parts](std::ostream& out) {
            for (const auto& part : parts) {
              out.write(reinterpret_cast<const char*>(part.data()),
                        static_cast<std::streamsize>(part.size()));
            }
          }};
}

// Views the features section of FeatureKind::sparse (its length was checked) as SparseFeatures.
std::shared_ptr<const SparseFeatures> view_sparse_features(
    const std::shared_ptr<const MappedFile>& file, const SectionEntry& section,
    std::int64_t num_nodes, int dim, std::uint64_t nonzeros) {
  const auto part = [&](std::uint64_t offset_bytes, std::uint64_t length_bytes) {
    return SectionEntry{section.offset_bytes + offset_bytes, length_bytes};
  };
  const std::uint64_t offsets_bytes = (static_cast<std::uint64_t>(num_nodes) + 1) * 8;
  SharedArray<std::int64_t> offsets = view_section<std::int64_t>(file, part(0, offsets_bytes));
  SharedArray<std::int32_t> columns =
      view_section<std::int32_t>(file, part(offsets_bytes, nonzeros * 4));
  SharedArray<float> values =
      view_section<float>(file, part(offsets_bytes + nonzeros * 4, nonzeros * 4));
  const auto finite = [](float value) { return std::isfinite(value); };
  if (const auto bad = std::find_if_not(values.begin(), values.end(), finite);
      bad != values.end()) {
    throw InputError(
        file->file(), 0, "features",
        "sparse value " + std::to_string(bad - values.begin()) + " is " + std::to_string(*bad));
  }
  try {
    return std::make_shared<const SparseFeatures>(num_nodes, dim, std::move(offsets),
                                                  std::move(columns), std::move(values));
  } catch (const InputError&) {
    throw;
  } catch (const Error& error) {
    throw InputError(file->file(), 0, "features", error.what());
  }
}

}  // namespace gnnbed
