// MpiSession's settings of the MPI library, read back through the MPI tool interface. Its own
// main(): the session must start MPI, which the other MPI suites' shared main does itself.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>

#include "exec/mpi/mpi_transport.hpp"

namespace gnnbed {
namespace {

constexpr const char* kFragmentVariable = "OMPI_MCA_btl_tcp_rdma_pipeline_frag_size";

// What the user set before the session started, if anything.
std::string user_fragment_bytes;

// Open MPI's value of one of its unsigned-long control variables; false where this MPI has none
// of that name (another MPI library, or Open MPI without its TCP transport loaded).
bool read_unsigned_long_cvar(const char* name, unsigned long& value) {
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return false;
  MPI_T_cvar_handle handle = nullptr;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return false;
  const bool read = count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&handle);
  return read;
}

TEST(MpiSession, OpenMpiSendsLargeTcpMessagesInFragmentsThatInterleave) {
  int provided = 0;
  ASSERT_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  unsigned long fragment_bytes = 0;
  const bool found = read_unsigned_long_cvar("btl_tcp_rdma_pipeline_frag_size", fragment_bytes);
  MPI_T_finalize();
  if (!found) GTEST_SKIP() << "this MPI has no btl_tcp_rdma_pipeline_frag_size";
  const unsigned long expected =
      user_fragment_bytes.empty() ? 262144UL : std::stoul(user_fragment_bytes);
  EXPECT_EQ(fragment_bytes, expected);
}

}  // namespace
}  // namespace gnnbed

int main(int argc, char** argv) {
  if (const char* value = std::getenv(gnnbed::kFragmentVariable)) {
    gnnbed::user_fragment_bytes = value;
  }
  const gnnbed::MpiSession session(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
