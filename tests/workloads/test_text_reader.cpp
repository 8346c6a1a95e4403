#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/random.hpp"
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

// Numbers in the forms data files hold, drawn from `seed`: short and long decimals (up to 20
// digits, past the fast paths' limits), signs, leading zeros, exponents, and some broken ones.
std::vector<std::string> number_texts(std::uint64_t seed, int count) {
  Rng rng(seed);
  std::vector<std::string> texts;
  for (int i = 0; i < count; ++i) {
    std::string text = rng.below(4) == 0 ? "-" : "";
    const auto whole = rng.below(21);
    for (std::uint64_t d = 0; d < whole; ++d) text += static_cast<char>('0' + rng.below(10));
    const auto form = rng.below(10);
    if (form < 6) {
      text += '.';
      const auto fraction = rng.below(26);
      for (std::uint64_t d = 0; d < fraction; ++d) text += static_cast<char>('0' + rng.below(10));
    }
    if (form == 6) text += "e" + std::to_string(static_cast<int>(rng.below(80)) - 40);
    if (form == 7) text += "x";
    texts.push_back(text);
  }
  return texts;
}

TEST(FieldParser, NumbersParseBitForBitAsFromCharsDoes) {
  const std::vector<std::string> texts = number_texts(20261130, 20000);
  std::string content;
  for (const std::string& text : texts) content += text + "\t" + text + "\n";
  TemporaryDirectory dir;
  LineReader reader(dir.write("data.tsv", content));
  std::string_view line;
  for (const std::string& text : texts) {
    ASSERT_TRUE(reader.next(line));
    FieldParser fields(reader, line, '\t');
    double expected_real = 0;
    const auto real_end = std::from_chars(text.data(), text.data() + text.size(), expected_real);
    if (real_end.ec == std::errc() && real_end.ptr == text.data() + text.size() && !text.empty()) {
      const double parsed = fields.real("value");
      EXPECT_EQ(std::memcmp(&parsed, &expected_real, sizeof parsed), 0) << text;
    } else {
      EXPECT_THROW(fields.real("value"), InputError) << text;
    }
    std::int64_t expected_integer = 0;
    const auto integer_end =
        std::from_chars(text.data(), text.data() + text.size(), expected_integer);
    if (integer_end.ec == std::errc() && integer_end.ptr == text.data() + text.size()) {
      EXPECT_EQ(fields.integer("count"), expected_integer) << text;
    } else {
      EXPECT_THROW(fields.integer("count"), InputError) << text;
    }
  }
}

// Options that cut even a short file into several blocks and many pieces (each block a parallel
// loop: not so many that a test on a busy machine waits on thousands).
LineReaderOptions tiny_pieces(std::size_t block_bytes = 1024) {
  LineReaderOptions options;
  options.block_bytes = block_bytes;
  options.min_piece_bytes = 8;
  options.pieces_per_thread = 5;
  return options;
}

// Every line of `path` with its number, read piece by piece.
std::vector<std::pair<std::int64_t, std::string>> read_in_pieces(const std::filesystem::path& path,
                                                                 const LineReaderOptions& options) {
  LineReader reader(path, options);
  std::vector<std::vector<std::pair<std::int64_t, std::string>>> pieces(
      static_cast<std::size_t>(reader.max_pieces()));
  std::vector<std::pair<std::int64_t, std::string>> lines;
  reader.parse_in_pieces(
      [&](int piece, LineChunk& chunk) {
        std::string_view line;
        while (chunk.next(line)) {
          pieces[static_cast<std::size_t>(piece)].emplace_back(chunk.line_number(), line);
        }
      },
      [&](int piece) {
        auto& taken = pieces[static_cast<std::size_t>(piece)];
        lines.insert(lines.end(), taken.begin(), taken.end());
        taken.clear();
      });
  EXPECT_EQ(reader.line_number(), static_cast<std::int64_t>(lines.size()));
  return lines;
}

TEST(LineReader, PiecesGiveTheLinesAndNumbersThatNextGives) {
  TemporaryDirectory dir;
  std::string content = kMixedContent + "\r\n\n";
  for (int i = 0; i < 500; ++i)
    content += std::string(static_cast<std::size_t>(i % 70), 'x') + "\r\n";
  content += "last";
  const auto plain = dir.write("lines.txt", content);
  write_gzip(dir.path() / "lines.txt.gz", content);
  const std::vector<std::string> expected = read_all(plain);
  for (const auto& path : {plain, dir.path() / "lines.txt.gz"}) {
    for (const LineReaderOptions& options : {LineReaderOptions{}, tiny_pieces()}) {
      const auto lines = read_in_pieces(path, options);
      ASSERT_EQ(lines.size(), expected.size()) << path;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].first, static_cast<std::int64_t>(i) + 1);
        EXPECT_EQ(lines[i].second, expected[i]);
      }
    }
  }
}

TEST(LineReader, PiecesGoOnAfterTheLinesNextGave) {
  TemporaryDirectory dir;
  const auto path = dir.write("lines.txt", "first\nsecond\nthird\nfourth\n");
  LineReader reader(path, tiny_pieces());
  std::string_view line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "first");
  std::vector<std::string> rest;
  std::vector<std::string> piece_lines(static_cast<std::size_t>(reader.max_pieces()));
  reader.parse_in_pieces(
      [&](int piece, LineChunk& chunk) {
        while (chunk.next(line)) {
          piece_lines[static_cast<std::size_t>(piece)] +=
              std::to_string(chunk.line_number()) + ":" + std::string(line);
        }
      },
      [&](int piece) { rest.push_back(std::move(piece_lines[static_cast<std::size_t>(piece)])); });
  std::string joined;
  for (const std::string& text : rest) joined += text;
  EXPECT_EQ(joined, "2:second3:third4:fourth");
  EXPECT_EQ(reader.line_number(), 4);
}

TEST(LineReader, PiecesReportATruncatedGzipAtTheLineNextReportsIt) {
  TemporaryDirectory dir;
  std::string content;
  for (int i = 0; i < 200000; ++i) content += std::to_string(i * 7919 % 100003) + "\t1\n";
  write_gzip(dir.path() / "whole.tsv.gz", content);
  std::string bytes;
  {
    std::ifstream in(dir.path() / "whole.tsv.gz", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto cut = dir.write("cut.tsv.gz", bytes.substr(0, bytes.size() / 2));
  std::int64_t line_by_line = 0;
  try {
    LineReader reader(cut);
    std::string_view line;
    while (reader.next(line)) {
    }
  } catch (const InputError& error) {
    line_by_line = error.line();
  }
  ASSERT_GT(line_by_line, 1);
  for (const LineReaderOptions& options :
       {LineReaderOptions{}, tiny_pieces(std::size_t{64} << 10)}) {
    try {
      read_in_pieces(cut, options);
      ADD_FAILURE() << "a truncated gzip file read without error";
    } catch (const InputError& error) {
      EXPECT_EQ(error.line(), line_by_line);
      EXPECT_NE(std::string(error.what()).find("truncated"), std::string::npos) << error.what();
    }
  }
}

struct Pair {
  std::int64_t key;
  double value;
};

// "key<TAB>value" lines through parse_records; a key listed twice is an error of apply's.
std::vector<Pair> parse_pairs(const std::filesystem::path& path, const LineReaderOptions& options) {
  LineReader reader(path, options);
  std::vector<Pair> pairs;
  std::vector<std::int64_t> line_of(1000, 0);
  parse_records<Pair>(
      reader, '\t',
      [](FieldParser& fields) {
        const std::int64_t key = fields.integer("key");
        if (key < 0 || key >= 1000) fields.fail("key", "is outside [0, 1000)");
        return Pair{key, fields.real("value")};
      },
      [&](const Pair& pair, std::int64_t line) {
        auto& first = line_of[static_cast<std::size_t>(pair.key)];
        if (first != 0) {
          throw InputError(reader.file(), line, "key",
                           "listed twice (first on line " + std::to_string(first) + ")");
        }
        first = line;
        pairs.push_back(pair);
      });
  return pairs;
}

// The error `action` throws, as "line field: message".
template <typename Action>
std::string error_of(Action action) {
  try {
    action();
  } catch (const InputError& error) {
    return std::to_string(error.line()) + " " + error.field() + ": " + error.what();
  }
  return "no error";
}

TEST(ParseRecords, PiecesGiveTheRecordsAndTheFirstErrorOfOneSerialPass) {
  std::vector<std::string> lines;
  for (int i = 0; i < 900; ++i)
    lines.push_back(std::to_string(i) + "\t" + std::to_string(i) + ".5");
  TemporaryDirectory dir;
  auto parse_with = [&](const std::vector<std::string>& file_lines,
                        const LineReaderOptions& options) {
    std::string content;
    for (const std::string& line : file_lines) content += line + "\n";
    const auto path = dir.write("pairs.tsv", content);
    return error_of([&] { parse_pairs(path, options); });
  };
  LineReaderOptions serial;
  serial.pieces_per_thread = 1;
  serial.block_bytes = std::size_t{1} << 30;
  // One file per kind of error, and errors of both kinds in either order, the first in a late
  // piece: extra fields, a bad number, a duplicate key (apply's), a duplicate that also has extra
  // fields (apply takes the line's record before its end is checked).
  std::vector<std::vector<std::string>> files;
  auto with = [&](std::vector<std::pair<std::size_t, std::string>> changes) {
    std::vector<std::string> changed = lines;
    for (auto& [index, line] : changes) changed[index] = line;
    files.push_back(changed);
  };
  with({{811, "811\t1\t2"}});
  with({{811, "811\tnope"}, {850, "850\t"}});
  with({{811, "3\t1"}, {850, "850\tnope"}});
  with({{811, "811\tnope"}, {850, "3\t1"}});
  with({{811, "3\t1\textra"}});
  with({{811, "1000\t1"}});
  for (const auto& file_lines : files) {
    const std::string expected = parse_with(file_lines, serial);
    ASSERT_NE(expected, "no error");
    EXPECT_EQ(parse_with(file_lines, tiny_pieces()), expected);
    EXPECT_EQ(parse_with(file_lines, LineReaderOptions{}), expected);
  }
  EXPECT_NE(parse_with(files[4], tiny_pieces()).find("listed twice (first on line 4)"),
            std::string::npos);
  const auto path = dir.write("pairs.tsv", [&] {
    std::string content;
    for (const std::string& line : lines) content += line + "\n";
    return content;
  }());
  const auto serial_pairs = parse_pairs(path, serial);
  const auto piece_pairs = parse_pairs(path, tiny_pieces());
  ASSERT_EQ(piece_pairs.size(), 900u);
  for (std::size_t i = 0; i < serial_pairs.size(); ++i) {
    EXPECT_EQ(piece_pairs[i].key, serial_pairs[i].key);
    EXPECT_EQ(piece_pairs[i].value, serial_pairs[i].value);
  }
}

}  // namespace
}  // namespace gnnbed
