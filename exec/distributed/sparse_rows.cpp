#include "exec/distributed/sparse_rows.hpp"

#include <algorithm>
#include <cstring>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

template <typename T>
void append(std::vector<std::byte>& out, std::span<const T> values) {
  const std::size_t at = out.size();
  out.resize(at + values.size_bytes());
  if (!values.empty()) std::memcpy(out.data() + at, values.data(), values.size_bytes());
}

template <typename T>
std::vector<T> take(std::span<const std::byte> bytes, std::size_t& at, std::size_t count) {
  std::vector<T> values(count);
  if (count > 0) std::memcpy(values.data(), bytes.data() + at, count * sizeof(T));
  at += count * sizeof(T);
  return values;
}

}  // namespace

std::vector<std::byte> encode_sparse_rows(const SparseMatrix& rows) {
  std::vector<std::int32_t> lengths(static_cast<std::size_t>(rows.rows));
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    lengths[r] = static_cast<std::int32_t>(rows.offsets[r + 1] - rows.offsets[r]);
  }
  std::vector<std::byte> out;
  out.reserve(lengths.size() * sizeof(std::int32_t) +
              rows.columns.size() * (sizeof(std::int32_t) + sizeof(float)));
  append(out, std::span<const std::int32_t>(lengths));
  append(out, std::span<const std::int32_t>(rows.columns));
  append(out, std::span<const float>(rows.weights));
  return out;
}

SparseMatrix decode_sparse_rows(std::span<const std::byte> bytes, std::int64_t rows,
                                std::int64_t cols, std::int64_t entries, const std::string& where) {
  const auto expected = static_cast<std::size_t>(rows) * sizeof(std::int32_t) +
                        static_cast<std::size_t>(entries) * (sizeof(std::int32_t) + sizeof(float));
  if (bytes.size() != expected) {
    throw Error(where + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                std::to_string(expected) + " for " + std::to_string(rows) + " sparse rows of " +
                std::to_string(entries) + " entries");
  }
  std::size_t at = 0;
  const auto lengths = take<std::int32_t>(bytes, at, static_cast<std::size_t>(rows));
  SparseMatrix out;
  out.rows = rows;
  out.cols = cols;
  out.offsets.resize(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    if (lengths[r] < 0)
      throw Error(where + ": row " + std::to_string(r) + " has a negative length");
    out.offsets[r + 1] = out.offsets[r] + lengths[r];
  }
  if (out.offsets.back() != entries) {
    throw Error(where + ": the rows' lengths add up to " + std::to_string(out.offsets.back()) +
                " entries, expected " + std::to_string(entries));
  }
  out.columns = take<std::int32_t>(bytes, at, static_cast<std::size_t>(entries));
  out.weights = take<float>(bytes, at, static_cast<std::size_t>(entries));
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    for (auto e = out.offsets[r]; e < out.offsets[r + 1]; ++e) {
      const std::int32_t c = out.columns[static_cast<std::size_t>(e)];
      const bool increasing =
          e == out.offsets[r] || c > out.columns[static_cast<std::size_t>(e - 1)];
      if (c < 0 || c >= cols || !increasing) {
        throw Error(where + ": row " + std::to_string(r) + " has column " + std::to_string(c) +
                    " out of order or outside [0, " + std::to_string(cols) + ")");
      }
    }
  }
  return out;
}

SparseMatrix place_sparse_rows(std::int64_t rows, std::int64_t cols,
                               std::span<const SparseRowsPart> parts) {
  // Where each output row comes from: its part and row there.
  std::vector<std::pair<std::int32_t, std::int32_t>> source(static_cast<std::size_t>(rows),
                                                            {-1, -1});
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const SparseRowsPart& part = parts[p];
    if (static_cast<std::int64_t>(part.positions.size()) != part.rows->rows ||
        part.rows->cols != cols) {
      throw Error("part " + std::to_string(p) + ": " + std::to_string(part.positions.size()) +
                  " positions for " + std::to_string(part.rows->rows) + " rows of " +
                  std::to_string(part.rows->cols) + " columns (expected " + std::to_string(cols) +
                  ")");
    }
    for (std::size_t i = 0; i < part.positions.size(); ++i) {
      const std::int32_t at = part.positions[i];
      if (at < 0 || at >= rows || source[static_cast<std::size_t>(at)].first >= 0) {
        throw Error("part " + std::to_string(p) + " writes row " + std::to_string(at) +
                    ", outside [0, " + std::to_string(rows) + ") or written before");
      }
      source[static_cast<std::size_t>(at)] = {static_cast<std::int32_t>(p),
                                              static_cast<std::int32_t>(i)};
    }
  }
  const auto unwritten =
      std::count_if(source.begin(), source.end(), [](const auto& s) { return s.first < 0; });
  if (unwritten > 0) {
    throw Error(std::to_string(unwritten) + " of its " + std::to_string(rows) +
                " rows are written by no part");
  }
  SparseMatrix out;
  out.rows = rows;
  out.cols = cols;
  out.offsets.resize(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t r = 0; r < source.size(); ++r) {
    const SparseMatrix& from = *parts[static_cast<std::size_t>(source[r].first)].rows;
    const auto i = static_cast<std::size_t>(source[r].second);
    out.offsets[r + 1] = out.offsets[r] + from.offsets[i + 1] - from.offsets[i];
  }
  out.columns.resize(static_cast<std::size_t>(out.offsets.back()));
  out.weights.resize(out.columns.size());
#pragma omp parallel for schedule(static) if (rows > 4096)
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::size_t>(r);
    const SparseMatrix& from = *parts[static_cast<std::size_t>(source[row].first)].rows;
    const auto i = static_cast<std::size_t>(source[row].second);
    const auto begin = static_cast<std::ptrdiff_t>(from.offsets[i]);
    const auto end = static_cast<std::ptrdiff_t>(from.offsets[i + 1]);
    const auto to = static_cast<std::ptrdiff_t>(out.offsets[row]);
    std::copy(from.columns.begin() + begin, from.columns.begin() + end, out.columns.begin() + to);
    std::copy(from.weights.begin() + begin, from.weights.begin() + end, out.weights.begin() + to);
  }
  return out;
}

}  // namespace gnnbed
