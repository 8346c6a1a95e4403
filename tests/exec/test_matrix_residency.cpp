// Matrix's two copies (exec/tensor.hpp): which one is current after host access and after a
// backend's writes, with a device copy that is ordinary memory, so that the protocol is checked
// on machines without a GPU (the CUDA backend's use of it is checked by test_backend_kernels_cuda).
#include <gtest/gtest.h>

#include <memory>
#include <memory_resource>
#include <vector>

#include "exec/tensor.hpp"

namespace gnnbed {
namespace {

// A device copy in host memory that counts its downloads.
class HostMemoryStorage final : public DeviceStorage {
 public:
  explicit HostMemoryStorage(int* downloads) : downloads_(downloads) {}
  void copy_to_host(float* host, std::int64_t count) override {
    ++*downloads_;
    std::copy_n(values.begin(), count, host);
  }
  std::vector<float> values;

 private:
  int* downloads_;
};

// What a backend does: attach, upload when the device copy is stale, write results there.
struct HostMemoryBackend {
  int downloads = 0;
  int uploads = 0;
  HostMemoryStorage& storage(const Matrix& m) {
    if (m.device_storage() == nullptr)
      m.attach_device_storage(std::make_unique<HostMemoryStorage>(&downloads));
    return static_cast<HostMemoryStorage&>(*m.device_storage());
  }
  std::vector<float>& read(const Matrix& m) {
    HostMemoryStorage& s = storage(m);
    if (!m.device_current()) {
      ++uploads;
      s.values.assign(m.host_values_as_is(), m.host_values_as_is() + m.size());
      m.mark_device_current();
    }
    return s.values;
  }
  // out = 2 * in, written on the "device" only.
  void double_into(const Matrix& in, Matrix& out) {
    const std::vector<float> source = read(in);
    HostMemoryStorage& s = storage(out);
    s.values.resize(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) s.values[i] = 2 * source[i];
    out.mark_written_on_device(in.rows(), in.cols());
  }
};

TEST(MatrixResidency, DeviceResultsStayThereUntilTheHostReadsThem) {
  HostMemoryBackend backend;
  Matrix in(2, 3);
  in.fill(1.5f);
  Matrix out;
  backend.double_into(in, out);
  backend.double_into(out, in);  // reads `out` on the device: no download, no upload
  EXPECT_EQ(backend.uploads, 1);
  EXPECT_EQ(backend.downloads, 0);
  EXPECT_EQ(out.rows(), 2);
  EXPECT_EQ(out.cols(), 3);
  const Matrix& read_only = in;
  EXPECT_EQ(read_only(1, 2), 6.0f);  // one download
  EXPECT_EQ(read_only.data()[0], 6.0f);
  EXPECT_EQ(backend.downloads, 1);
  EXPECT_TRUE(in.device_current()) << "reading on the host leaves the device copy current";
  backend.double_into(in, out);
  EXPECT_EQ(backend.uploads, 1);
}

TEST(MatrixResidency, HostWritesMakeTheDeviceCopyStale) {
  HostMemoryBackend backend;
  Matrix m(1, 4);
  backend.read(m);
  m(0, 1) = 7.0f;
  EXPECT_FALSE(m.device_current());
  EXPECT_EQ(backend.read(m)[1], 7.0f);
  EXPECT_EQ(backend.uploads, 2);
  m.reshape_for_overwrite(2, 2);
  EXPECT_FALSE(m.device_current());
  m.fill(3.0f);
  EXPECT_EQ(backend.read(m), std::vector<float>(4, 3.0f));
}

TEST(MatrixResidency, CopiesAndMovesCarryTheCurrentValues) {
  HostMemoryBackend backend;
  Matrix in(3, 1);
  in.fill(2.0f);
  Matrix on_device;
  backend.double_into(in, on_device);
  const Matrix copy = on_device;  // downloads
  EXPECT_EQ(copy(2, 0), 4.0f);
  EXPECT_EQ(copy.device_storage(), nullptr);
  Matrix other;
  backend.double_into(on_device, other);
  Matrix moved = std::move(other);  // the device copy moves with it, still the current one
  EXPECT_EQ(other.size(), 0);
  EXPECT_EQ(backend.downloads, 1);
  EXPECT_EQ(moved(0, 0), 8.0f);
  Matrix assigned;
  assigned = moved;
  EXPECT_EQ(assigned(1, 0), 8.0f);
}

TEST(MatrixResidency, HostMemoryCanBeChangedKeepingTheValues) {
  std::pmr::monotonic_buffer_resource arena;
  Matrix m(2, 2);
  m(1, 1) = 9.0f;
  m.use_host_memory(&arena);
  EXPECT_EQ(m.host_memory(), &arena);
  EXPECT_EQ(m(1, 1), 9.0f);
  m.reshape_for_overwrite(4, 4);  // grows in the same memory
  EXPECT_EQ(m.host_memory(), &arena);
  // Moving into it copies the values into its memory; copies use the default memory.
  Matrix source(1, 2);
  source(0, 1) = 4.0f;
  m = std::move(source);
  EXPECT_EQ(m.host_memory(), &arena);
  EXPECT_EQ(m(0, 1), 4.0f);
  EXPECT_NE(Matrix(m).host_memory(), &arena);
}

}  // namespace
}  // namespace gnnbed
