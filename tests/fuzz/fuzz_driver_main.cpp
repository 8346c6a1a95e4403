// Runs a fuzz target without libFuzzer: over its seeds, over given input files (a crash libFuzzer
// found, to replay it), and over deterministic mutations of the seeds. ctest runs it as the fuzz
// smoke test; scripts/fuzz.sh uses --write-seeds to give libFuzzer its starting corpus.
//   fuzz_<reader>_replay [--mutations N] [--seed S] [--write-seeds DIR] [FILE...]
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"

namespace {

struct Options {
  long mutations = 0;
  std::uint64_t seed = 1;
  std::string seeds_directory;
  std::vector<std::string> files;
};

// Replaces a run of digits with a number chosen to sit at a boundary a reader must check.
void replace_a_number(std::string& input, std::mt19937_64& random) {
  static const char* const kNumbers[] = {
      "0",     "-1",     "2147483647", "2147483648", "4294967296",          "-9223372036854775808",
      "1e300", "3.5e38", "nan",        "inf",        "99999999999999999999"};
  const std::size_t start = random() % input.size();
  const std::size_t digit = input.find_first_of("0123456789", start);
  if (digit == std::string::npos) return;
  const std::size_t end = input.find_first_not_of("0123456789.", digit);
  const auto& number = kNumbers[random() % std::size(kNumbers)];
  input.replace(digit, (end == std::string::npos ? input.size() : end) - digit, number);
}

// One mutation of the kinds that find reader bugs: a flipped bit, an extreme byte, a cut, a
// repeated or removed range, a boundary number.
void mutate_once(std::string& input, std::mt19937_64& random) {
  if (input.empty()) {
    input.push_back(static_cast<char>(random()));
    return;
  }
  const std::size_t at = random() % input.size();
  const std::size_t length = 1 + random() % std::min<std::size_t>(input.size() - at, 64);
  static const char kBytes[] = {'\0', '\xff', '\x7f', '\x80', '-', '9', '\n', '\t', ',', '"', '{'};
  switch (random() % 7) {
    case 0:
      input[at] = static_cast<char>(input[at] ^ (1 << (random() % 8)));
      break;
    case 1:
      input[at] = kBytes[random() % sizeof(kBytes)];
      break;
    case 2:
      input.resize(at);
      break;
    case 3:
      input.erase(at, length);
      break;
    case 4:
      input.insert(at, input.substr(at, length));
      break;
    case 5:
      replace_a_number(input, random);
      break;
    default:
      for (std::size_t i = 0; i < length; ++i) input[at + i] = static_cast<char>(random());
  }
}

int run_one(const std::string& input) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

// False (after a usage line) for arguments it does not know.
bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const bool has_value = i + 1 < argc;
    if (argument == "--mutations" && has_value) {
      options.mutations = std::stol(argv[++i]);
    } else if (argument == "--seed" && has_value) {
      options.seed = std::stoull(argv[++i]);
    } else if (argument == "--write-seeds" && has_value) {
      options.seeds_directory = argv[++i];
    } else if (!argument.empty() && argument[0] == '-') {
      std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] [--write-seeds DIR] [FILE...]\n",
                   argv[0]);
      return false;
    } else {
      options.files.push_back(argument);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) return 2;
  LLVMFuzzerInitialize(&argc, &argv);
  const std::vector<std::string> seeds = gnnbed::fuzz::fuzz_seed_inputs();
  if (!options.seeds_directory.empty()) {
    std::filesystem::create_directories(options.seeds_directory);
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream(std::filesystem::path(options.seeds_directory) / ("seed-" + std::to_string(i)),
                    std::ios::binary)
          << seeds[i];
    }
    std::printf("%zu seeds written to %s\n", seeds.size(), options.seeds_directory.c_str());
    return 0;
  }
  for (const std::string& file : options.files) run_one(gnnbed::fuzz::read_whole_file(file));
  for (const std::string& seed : seeds) run_one(seed);
  std::mt19937_64 random(options.seed);
  for (long i = 0; i < options.mutations; ++i) {
    std::string input = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const int num_mutations = 1 + static_cast<int>(random() % 4);
    for (int m = 0; m < num_mutations; ++m) mutate_once(input, random);
    run_one(input);
  }
  std::printf("%zu files, %zu seeds and %ld mutations read without a defect\n",
              options.files.size(), seeds.size(), options.mutations);
  return 0;
}
