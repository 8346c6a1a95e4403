#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> entries(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteFileAtomically, WritesAndReplacesCreatingParentDirectories) {
  TemporaryDirectory dir;
  const auto path = dir.path() / "a" / "b" / "out.txt";
  write_file_atomically(path, [](std::ostream& out) { out << "first"; });
  EXPECT_EQ(read_file(path), "first");
  write_text_file_atomically(path, "second, longer");
  EXPECT_EQ(read_file(path), "second, longer");
  EXPECT_EQ(entries(path.parent_path()), std::vector<std::string>{"out.txt"});
}

TEST(WriteFileAtomically, ThrowingWriterLeavesTheOldFileAndNoTemporary) {
  TemporaryDirectory dir;
  const auto path = dir.write("result.json", "old content");
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "half of the new cont";
                                       out.flush();
                                       throw std::runtime_error("writer failed midway");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read_file(path), "old content");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"result.json"});
}

TEST(WriteFileAtomically, FailedStreamIsASystemErrorAndLeavesTheOldFile) {
  TemporaryDirectory dir;
  const auto path = dir.write("result.json", "old content");
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "partial";
                                       out.setstate(std::ios::badbit);
                                     }),
               SystemError);
  EXPECT_EQ(read_file(path), "old content");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"result.json"});
}

TEST(WriteFileAtomically, ThrowingWriterForANewFileCreatesNothing) {
  TemporaryDirectory dir;
  EXPECT_THROW(
      write_file_atomically(dir.path() / "new.bin", [](std::ostream&) { throw Error("no data"); }),
      Error);
  EXPECT_TRUE(entries(dir.path()).empty());
}

}  // namespace
}  // namespace gnnbed
