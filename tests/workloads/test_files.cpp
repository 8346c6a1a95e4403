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

TEST(OutputPath, OnlyRegularFilesInWritableFoldersAreAccepted) {
  TemporaryDirectory dir;
  EXPECT_EQ(output_path_problem(dir.path() / "new/deeper/r.json"), "");
  dir.write("old.json", "{}");
  EXPECT_EQ(output_path_problem(dir.path() / "old.json"), "");
  auto problem = [](const std::filesystem::path& path) { return output_path_problem(path); };
  EXPECT_NE(problem(dir.path() / "sub/").find("names a folder"), std::string::npos);
  EXPECT_NE(problem(dir.path()).find("is a folder"), std::string::npos);
  EXPECT_NE(problem("/dev/null").find("not a regular file"), std::string::npos);
  EXPECT_NE(problem(dir.path() / "old.json/r.json").find("is not a folder"), std::string::npos);
  EXPECT_NE(problem("/proc/none/r.json").find("cannot write in /proc"), std::string::npos);
  std::filesystem::create_symlink(dir.path() / "absent", dir.path() / "dangling");
  EXPECT_NE(problem(dir.path() / "dangling").find("link to nothing"), std::string::npos);
  EXPECT_EQ(problem(""), "the path is empty");
  try {
    check_output_path("/dev/null", "--csv");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "--csv");
  }
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"dangling", "old.json"}))
      << "checking writes nothing";
}

TEST(OutputPath, ALinkToAFileIsWrittenThroughAndStaysALink) {
  TemporaryDirectory dir;
  dir.write("target.json", "old");
  std::filesystem::create_symlink(dir.path() / "target.json", dir.path() / "link.json");
  write_text_file_atomically(dir.path() / "link.json", "new");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(read_file(dir.path() / "target.json"), "new");
  EXPECT_THROW(write_text_file_atomically("/dev/null", "x"), SystemError);
}

TEST(WriteFilesAtomically, AllOrNone) {
  TemporaryDirectory dir;
  dir.write("a.json", "old a");
  std::filesystem::create_directory(dir.path() / "c.csv");
  EXPECT_THROW(write_files_atomically({{dir.path() / "a.json", "new a"},
                                       {dir.path() / "b.json", "new b"},
                                       {dir.path() / "c.csv", "new c"}}),
               SystemError);
  EXPECT_EQ(read_file(dir.path() / "a.json"), "old a");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"a.json", "c.csv"}))
      << "neither the new file nor a temporary is left";
  write_files_atomically({{dir.path() / "a.json", "new a"}, {dir.path() / "b.json", "new b"}});
  EXPECT_EQ(read_file(dir.path() / "a.json"), "new a");
  EXPECT_EQ(read_file(dir.path() / "b.json"), "new b");
}

}  // namespace
}  // namespace gnnbed
