#pragma once
// Streaming reader of NumPy's .npz archives (np.savez and np.savez_compressed: a zip file of .npy
// arrays, stored or deflated, with zip64 sizes and offsets for members past 4 GiB). Members are
// read in order, a chunk at a time, so an array larger than memory can be converted as it
// streams. Every error names the archive, the member and what is wrong.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gnnbed {

// An array's element type as .npy describes it ('<' or '|' byte order only).
enum class NpyType {
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float16,
  float32,
  float64,
  boolean
};

struct NpyHeader {
  NpyType type = NpyType::float32;
  int element_bytes = 4;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::int64_t elements() const;
};

class NpzArchive {
 public:
  // Reads the central directory; throws InputError when `path` is not a readable zip archive.
  explicit NpzArchive(const std::filesystem::path& path);
  ~NpzArchive();
  NpzArchive(const NpzArchive&) = delete;
  NpzArchive& operator=(const NpzArchive&) = delete;

  const std::string& file() const { return file_; }
  // Array names ("edge_index" for member "edge_index.npy"), in the archive's order.
  std::vector<std::string> arrays() const;
  bool contains(const std::string& array) const;

  // The array's header; throws InputError naming the array when it is absent or malformed.
  NpyHeader header(const std::string& array);
  // Streams the array's elements, converted to double, to `consume` in chunks (in the array's
  // storage order: C or Fortran, as its header says). Integers beyond 2^53 lose precision: use
  // read_integers for ids.
  void read_reals(const std::string& array,
                  const std::function<void(std::span<const double>)>& consume);
  // The same for integer arrays (a floating-point or boolean array is refused).
  void read_integers(const std::string& array,
                     const std::function<void(std::span<const std::int64_t>)>& consume);
  // Streams a (2, n) integer array column by column, whatever its storage order: `consume` gets
  // the next elements of the first row and, as many, the same columns of the second. In C order
  // the rows lie n elements apart in the member and two streams read them in lockstep; a deflated
  // member cannot be entered in the middle, so the second inflates the first row and discards it
  // on its way to the second (the first row is inflated twice, nothing is held).
  void read_integer_columns(const std::string& array,
                            const std::function<void(std::span<const std::int64_t>,
                                                     std::span<const std::int64_t>)>& consume);

 private:
  struct Member;
  class MemberStream;
  Member read_entry(std::ifstream& in, std::uint64_t& at, std::uint64_t index) const;
  const Member& member(const std::string& array) const;
  // Opens the member and reads its .npy header, leaving `stream` at the first element.
  NpyHeader open(const std::string& array, std::unique_ptr<MemberStream>& stream);
  template <typename Value, typename CheckHeader>
  void read_elements(const std::string& array, const CheckHeader& check_header,
                     const std::function<void(std::span<const Value>)>& consume);

  std::string file_;
  std::vector<Member> members_;
};

// "edge_index" of `archive` as "archive.npz:edge_index", for errors.
std::string npz_location(const std::string& archive, const std::string& array);

}  // namespace gnnbed
