#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/text_reader.hpp"

namespace gnnbed {
namespace {

using testing::TemporaryDirectory;
using testing::write_gzip;

std::vector<std::string> read_all(const std::filesystem::path& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string_view line;
  while (reader.next(line)) {
    lines.emplace_back(line);
    EXPECT_EQ(reader.line_number(), static_cast<std::int64_t>(lines.size()));
  }
  EXPECT_FALSE(reader.next(line));
  return lines;
}

const std::string kMixedContent = "a\tb\r\n\nthird line\r\n \t\nlast without newline";
const std::vector<std::string> kMixedLines = {"a\tb", "", "third line", " \t",
                                              "last without newline"};

TEST(LineReader, PlainFileHandlesCrlfEmptyLinesAndMissingFinalNewline) {
  TemporaryDirectory dir;
  EXPECT_EQ(read_all(dir.write("mixed.txt", kMixedContent)), kMixedLines);
}

TEST(LineReader, GzipFileGivesTheSameLines) {
  TemporaryDirectory dir;
  write_gzip(dir.path() / "mixed.txt.gz", kMixedContent);
  EXPECT_EQ(read_all(dir.path() / "mixed.txt.gz"), kMixedLines);
}

TEST(LineReader, EmptyFileHasNoLinesAndFinalNewlineAddsNoEmptyLine) {
  TemporaryDirectory dir;
  EXPECT_TRUE(read_all(dir.write("empty.txt", "")).empty());
  EXPECT_EQ(read_all(dir.write("two.txt", "x\ny\n")), (std::vector<std::string>{"x", "y"}));
}

TEST(LineReader, LinesLongerThanTheReadChunkAndManyLinesAcrossChunks) {
  TemporaryDirectory dir;
  const std::string long_line(3 << 20, 'q');
  std::string content = "short\n" + long_line + "\n";
  for (int i = 0; i < 300000; ++i) content += std::to_string(i) + "\n";
  const auto path = dir.write("big.txt", content);
  for (const auto& file : {path, dir.path() / "big.txt.gz"}) {
    if (file.extension() == ".gz") write_gzip(file, content);
    const auto lines = read_all(file);
    ASSERT_EQ(lines.size(), 300002u);
    EXPECT_EQ(lines[0], "short");
    EXPECT_EQ(lines[1], long_line);
    EXPECT_EQ(lines[2], "0");
    EXPECT_EQ(lines[300001], "299999");
  }
}

TEST(LineReader, MissingFileIsAnInputErrorNamingIt) {
  TemporaryDirectory dir;
  const auto path = dir.path() / "absent.tsv";
  try {
    LineReader reader(path);
    FAIL() << "no exception";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), path.string());
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
  }
}

TEST(LineReader, TruncatedGzipIsAnInputErrorNamingTheFile) {
  TemporaryDirectory dir;
  std::string content;
  for (int i = 0; i < 200000; ++i) content += std::to_string(i * 7919 % 100003) + "\t1\n";
  const auto whole = dir.path() / "whole.tsv.gz";
  write_gzip(whole, content);
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 1000u);
  const auto cut = dir.write("cut.tsv.gz", bytes.substr(0, bytes.size() / 2));
  LineReader reader(cut);
  std::string_view line;
  std::int64_t lines = 0;
  try {
    while (reader.next(line)) ++lines;
    FAIL() << "a truncated gzip file read without error (" << lines << " lines)";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), cut.string());
    EXPECT_NE(std::string(error.what()).find("cut.tsv.gz"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
  }
  EXPECT_GT(lines, 0);
  EXPECT_LT(lines, 200000);
}

// Reads line `line_number` of `content` and hands a parser for it to `check`.
template <typename Check>
void with_line(const std::string& content, int line_number, char separator, Check check) {
  TemporaryDirectory dir;
  LineReader reader(dir.write("data.tsv", content));
  std::string_view line;
  for (int i = 0; i < line_number; ++i) ASSERT_TRUE(reader.next(line));
  FieldParser fields(reader, line, separator);
  check(fields);
}

// Expects `action` to throw an InputError for data.tsv:line, naming `field`, whose message
// contains `problem`.
template <typename Action>
void expect_field_error(Action action, std::int64_t line, const std::string& field,
                        const std::string& problem) {
  try {
    action();
    FAIL() << "no exception";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.line(), line);
    EXPECT_EQ(error.field(), field);
    EXPECT_NE(message.find("data.tsv:" + std::to_string(line)), std::string::npos) << message;
    if (!field.empty()) {
      EXPECT_NE(message.find("field '" + field + "'"), std::string::npos) << message;
    }
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
}

TEST(FieldParser, ParsesIntegersRealsAndTextSeparatedByTabs) {
  with_line("header\n12\t-3\t2.5\tname\t1e-3\n", 2, '\t', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("a"), 12);
    EXPECT_EQ(fields.integer("b"), -3);
    EXPECT_DOUBLE_EQ(fields.real("c"), 2.5);
    EXPECT_EQ(fields.text("d"), "name");
    EXPECT_FLOAT_EQ(fields.real32("e"), 1e-3f);
    EXPECT_TRUE(fields.at_end());
    fields.expect_end();
  });
}

TEST(FieldParser, SpaceSeparatorTakesAnyRunOfSpacesAndTabs) {
  with_line("  7 \t  8\t \n", 1, ' ', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("src"), 7);
    EXPECT_EQ(fields.integer("dst"), 8);
    EXPECT_TRUE(fields.at_end());
  });
}

TEST(FieldParser, CommaSeparatedIntegersAtTheInt64Limits) {
  with_line("9223372036854775807,-9223372036854775808\n", 1, ',', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("max"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(fields.integer("min"), std::numeric_limits<std::int64_t>::min());
    fields.expect_end();
  });
}

TEST(FieldParser, MissingFieldNamesFileLineAndField) {
  with_line("1\t2\n3\n", 2, '\t', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("src"), 3);
    expect_field_error([&] { fields.integer("dst"); }, 2, "dst", "missing");
  });
  with_line("# c\n  5  \n", 2, ' ', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("src"), 5);
    expect_field_error([&] { fields.integer("dst"); }, 2, "dst", "missing");
  });
}

TEST(FieldParser, ExtraFieldsAreReported) {
  with_line("1\t2\t3\n", 1, '\t', [](FieldParser& fields) {
    fields.integer("src");
    fields.integer("dst");
    EXPECT_FALSE(fields.at_end());
    expect_field_error([&] { fields.expect_end(); }, 1, "", "extra fields: '3'");
  });
}

TEST(FieldParser, NonNumericFieldsNameTheFieldAndTheText) {
  with_line("x\n4\tabc\t1.5\t\tnan\tone\n", 2, '\t', [](FieldParser& fields) {
    EXPECT_EQ(fields.integer("node"), 4);
    expect_field_error([&] { fields.integer("class"); }, 2, "class", "'abc' is not an integer");
    expect_field_error([&] { fields.integer("count"); }, 2, "count", "'1.5' is not an integer");
    expect_field_error([&] { fields.integer("empty"); }, 2, "empty", "is empty");
    expect_field_error([&] { fields.real("value"); }, 2, "value", "'nan' is not finite");
    expect_field_error([&] { fields.real("weight"); }, 2, "weight", "'one' is not a number");
  });
}

TEST(FieldParser, OutOfRangeIntegerIsReported) {
  with_line("99999999999999999999 1\n", 1, ' ', [](FieldParser& fields) {
    expect_field_error([&] { fields.integer("src"); }, 1, "src", "out of the 64-bit integer range");
  });
}

TEST(FieldParser, IsBlank) {
  EXPECT_TRUE(is_blank(""));
  EXPECT_TRUE(is_blank(" \t "));
  EXPECT_FALSE(is_blank(" x "));
}

}  // namespace
}  // namespace gnnbed
