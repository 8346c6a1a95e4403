#pragma once
// Writes .npz archives as NumPy does (np.savez: stored members; np.savez_compressed: deflated),
// for tests that need archives too large or too many to keep as fixtures
// (tests/workloads/data/ogb_npz holds the small ones, with zip64 records).
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gnnbed::testing {

// A .npy file of int64 values (descr '<i8'): magic, version 1, the header padded to 64 bytes, the
// values in the order given. `shape` need not match the values' count (a damaged array).
std::string npy_int64(const std::vector<std::int64_t>& shape, bool fortran_order,
                      std::span<const std::int64_t> values);
// The same for float64 values (descr '<f8').
std::string npy_float64(const std::vector<std::int64_t>& shape, std::span<const double> values);

// A zip archive of `members` (name without ".npy", .npy bytes), every member stored or deflated.
void write_npz(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, std::string>>& members, bool deflated);

}  // namespace gnnbed::testing
