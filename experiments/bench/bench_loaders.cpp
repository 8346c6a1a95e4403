// bench_loaders: how fast the text loaders read their layouts. Writes seeded, deterministic files
// of realistic size in each layout (a co-authorship-like planetoid-TSV folder, a SNAP edge list,
// an OGB CSV folder, plain and gzipped), then times, the best of --repeats runs with the files in
// the page cache: the scan (every file's lines and fields through LineReader and FieldParser on one
// thread: the shared parser's speed alone) and each loader (parsing, checks, graph building and
// features) per thread count. Prints MB/s of text and the loader's peak resident memory, one
// readable line each, then one JSON line.
#include <omp.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "workloads/common/command_line.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/json_config.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"
#include "workloads/common/stopwatch.hpp"
#include "workloads/common/text_reader.hpp"
#include "workloads/loaders.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

constexpr std::uint64_t kSeed = 20261130;

void append_number(std::string& out, std::int64_t value) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// A real number as datasets write them: six digits after the point.
void append_real(std::string& out, double value) {
  char digits[48];
  const auto [end, error] =
      std::to_chars(digits, digits + sizeof digits, value, std::chars_format::fixed, 6);
  out.append(digits, end);
}

void write_text(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw SystemError("cannot write " + path.string());
}

void write_gzip_text(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  gzFile out = gzopen(path.string().c_str(), "wb6");
  if (out == nullptr) throw SystemError("cannot write " + path.string());
  std::size_t written = 0;
  while (written < content.size()) {
    const auto piece =
        static_cast<unsigned>(std::min<std::size_t>(content.size() - written, 1 << 30));
    if (gzwrite(out, content.data() + written, piece) != static_cast<int>(piece)) {
      gzclose(out);
      throw SystemError("cannot write " + path.string());
    }
    written += piece;
  }
  if (gzclose(out) != Z_OK) throw SystemError("cannot write " + path.string());
}

// `count` distinct undirected edges u < v among `num_nodes` nodes, sorted.
std::vector<std::pair<std::int64_t, std::int64_t>> distinct_edges(std::int64_t num_nodes,
                                                                  std::int64_t count, Rng& rng) {
  std::vector<std::uint64_t> keys;
  while (static_cast<std::int64_t>(keys.size()) < count) {
    const auto missing = static_cast<std::size_t>(count) - keys.size();
    for (std::size_t i = 0; i < missing; ++i) {
      const std::uint64_t a = rng.below(static_cast<std::uint64_t>(num_nodes));
      const std::uint64_t b = rng.below(static_cast<std::uint64_t>(num_nodes));
      if (a != b) keys.push_back(std::min(a, b) << 32 | std::max(a, b));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  for (const std::uint64_t key : keys) {
    edges.emplace_back(static_cast<std::int64_t>(key >> 32),
                       static_cast<std::int64_t>(key & 0xffffffffULL));
  }
  return edges;
}

std::string edge_lines(const std::vector<std::pair<std::int64_t, std::int64_t>>& edges,
                       char separator) {
  std::string out;
  for (const auto& [u, v] : edges) {
    append_number(out, u);
    out += separator;
    append_number(out, v);
    out += '\n';
  }
  return out;
}

// Bag-of-words rows: 1 to 63 distinct columns per node (32 on average), most values 1.
std::string sparse_feature_lines(std::int64_t num_nodes, std::int64_t dim, std::int64_t& nonzeros,
                                 Rng& rng) {
  std::string out;
  std::vector<std::int64_t> columns;
  nonzeros = 0;
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    columns.clear();
    const auto wanted = 1 + rng.below(63);
    for (std::uint64_t i = 0; i < wanted; ++i) {
      columns.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(dim))));
    }
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    for (const std::int64_t column : columns) {
      append_number(out, v);
      out += '\t';
      append_number(out, column);
      out += '\t';
      if (rng.below(10) == 0) {
        append_real(out, rng.uniform());
      } else {
        out += '1';
      }
      out += '\n';
    }
    nonzeros += static_cast<std::int64_t>(columns.size());
  }
  return out;
}

// A Coauthor-Physics-sized folder: 34,493 nodes, 8,415 columns, about 1.1 M non-zeros, 248 k edges.
void write_planetoid(const std::filesystem::path& folder, double scale) {
  Rng rng(hash_mix(kSeed, 1));
  const auto num_nodes = static_cast<std::int64_t>(34493 * scale);
  const std::int64_t dim = 8415;
  const std::int64_t num_classes = 5;
  const auto edges = distinct_edges(num_nodes, static_cast<std::int64_t>(247962 * scale), rng);
  write_text(folder / "edges.tsv", edge_lines(edges, '\t'));
  std::int64_t nonzeros = 0;
  write_text(folder / "features_sparse.tsv", sparse_feature_lines(num_nodes, dim, nonzeros, rng));
  std::string labels;
  std::string split;
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    append_number(labels, v);
    labels += '\t';
    append_number(labels, static_cast<std::int64_t>(rng.below(num_classes)));
    labels += '\n';
    append_number(split, v);
    split += v % 10 < 6 ? "\ttrain\n" : v % 10 < 8 ? "\tval\n" : "\ttest\n";
  }
  write_text(folder / "labels.tsv", labels);
  write_text(folder / "split.tsv", split);
  write_text(folder / "meta.tsv",
             "num_nodes\t" + std::to_string(num_nodes) + "\nnum_features\t" + std::to_string(dim) +
                 "\nnum_classes\t" + std::to_string(num_classes) + "\nnum_undirected_edges\t" +
                 std::to_string(edges.size()) + "\nnum_feature_nonzeros\t" +
                 std::to_string(nonzeros) +
                 "\nfeature_format\tfeatures_sparse.tsv (node<TAB>feature<TAB>value, non-zeros "
                 "only)\n");
}

// A SNAP-style file: a comment header, then 4 M "src<TAB>dst" lines over 1 M node ids.
void write_edge_list(const std::filesystem::path& file, double scale) {
  Rng rng(hash_mix(kSeed, 2));
  const auto num_nodes = static_cast<std::uint64_t>(1000000 * scale);
  const auto num_edges = static_cast<std::int64_t>(4000000 * scale);
  std::string out = "# Directed graph: bench_loaders\n# FromNodeId\tToNodeId\n";
  for (std::int64_t e = 0; e < num_edges; ++e) {
    append_number(out, static_cast<std::int64_t>(rng.below(num_nodes)));
    out += '\t';
    append_number(out, static_cast<std::int64_t>(rng.below(num_nodes)));
    out += '\n';
  }
  write_text(file, out);
}

// An ogbn-arxiv-like folder (fewer nodes): 50 k nodes with 100 dense features, 1 M edges, 40
// classes, a time split; plain under `plain`, the same files gzipped under `gzipped`.
void write_ogb(const std::filesystem::path& plain, const std::filesystem::path& gzipped,
               double scale) {
  Rng rng(hash_mix(kSeed, 3));
  const auto num_nodes = static_cast<std::int64_t>(50000 * scale);
  const std::int64_t dim = 100;
  std::vector<std::pair<std::string, std::string>> files;
  std::string edges;
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(1000000 * scale); ++e) {
    append_number(edges,
                  static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(num_nodes))));
    edges += ',';
    append_number(edges,
                  static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(num_nodes))));
    edges += '\n';
  }
  files.emplace_back("raw/edge.csv", std::move(edges));
  std::string features;
  std::string labels;
  std::string parts[3];
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    for (std::int64_t j = 0; j < dim; ++j) {
      if (j > 0) features += ',';
      append_real(features, 0.1 * rng.normal());
    }
    features += '\n';
    append_number(labels, static_cast<std::int64_t>(rng.below(40)));
    labels += '\n';
    std::string& part = parts[v % 10 < 6 ? 0 : v % 10 < 8 ? 1 : 2];
    append_number(part, v);
    part += '\n';
  }
  files.emplace_back("raw/node-feat.csv", std::move(features));
  files.emplace_back("raw/node-label.csv", std::move(labels));
  files.emplace_back("raw/num-node-list.csv", std::to_string(num_nodes) + "\n");
  files.emplace_back("split/time/train.csv", std::move(parts[0]));
  files.emplace_back("split/time/valid.csv", std::move(parts[1]));
  files.emplace_back("split/time/test.csv", std::move(parts[2]));
  for (const auto& [name, content] : files) {
    write_text(plain / name, content);
    write_gzip_text(gzipped / (name + ".gz"), content);
  }
}

std::int64_t bytes_under(const std::filesystem::path& path) {
  if (std::filesystem::is_regular_file(path)) {
    return static_cast<std::int64_t>(std::filesystem::file_size(path));
  }
  std::int64_t total = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) total += static_cast<std::int64_t>(entry.file_size());
  }
  return total;
}

// The kernel's resident-set high-water mark of this process, restarted by restart_peak_rss():
// each layout's peak, not the largest so far. -1 where /proc does not offer it.
std::int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

bool restart_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// One text file of a layout and the fields of its lines, for the scan: 'i' integer, 'r' real,
// 't' text; a trailing '*' repeats the last kind to the line's end. Lines starting '#' are
// skipped.
struct TextFile {
  std::filesystem::path path;
  char separator;
  std::string fields;
};

struct Layout {
  std::string name;
  std::filesystem::path input;
  std::filesystem::path text;  // the same files uncompressed (input itself when not gzipped)
  std::function<std::int64_t()> load;  // returns the loaded node count
  std::vector<TextFile> files;
};

std::vector<TextFile> ogb_files(const std::filesystem::path& folder, const std::string& suffix) {
  return {{folder / ("raw/edge.csv" + suffix), ',', "ii"},
          {folder / ("raw/node-feat.csv" + suffix), ',', "r*"},
          {folder / ("raw/node-label.csv" + suffix), ',', "t"},
          {folder / ("split/time/train.csv" + suffix), ',', "i"},
          {folder / ("split/time/valid.csv" + suffix), ',', "i"},
          {folder / ("split/time/test.csv" + suffix), ',', "i"}};
}

std::vector<Layout> layouts(const std::filesystem::path& root) {
  const std::filesystem::path planetoid = root / "planetoid";
  return {
      {"planetoid-tsv",
       planetoid,
       planetoid,
       [planetoid] { return load_planetoid_tsv(planetoid).num_nodes(); },
       {{planetoid / "edges.tsv", '\t', "ii"},
        {planetoid / "features_sparse.tsv", '\t', "iir"},
        {planetoid / "labels.tsv", '\t', "ii"},
        {planetoid / "split.tsv", '\t', "it"}}},
      {"edge-list",
       root / "edges.txt",
       root / "edges.txt",
       [root] { return load_edge_list(root / "edges.txt", {}).num_nodes(); },
       {{root / "edges.txt", ' ', "ii"}}},
      {"ogb-csv", root / "ogb", root / "ogb",
       [root] { return load_ogb(root / "ogb", {}).num_nodes(); }, ogb_files(root / "ogb", "")},
      {"ogb-csv-gz", root / "ogb_gz", root / "ogb",
       [root] { return load_ogb(root / "ogb_gz", {}).num_nodes(); },
       ogb_files(root / "ogb_gz", ".gz")},
  };
}

// Reads every line of `file` with LineReader and FieldParser, one thread, and returns the sum of
// its numbers (so that nothing is optimized away): the shared scanner's speed alone.
double scan(const TextFile& file) {
  LineReader reader(file.path);
  double sum = 0;
  std::string_view line;
  while (reader.next(line)) {
    if (line.starts_with('#')) continue;
    FieldParser fields(reader, line, file.separator);
    for (std::size_t k = 0; k < file.fields.size(); ++k) {
      const bool repeat = k + 2 == file.fields.size() && file.fields.back() == '*';
      do {
        switch (file.fields[k]) {
          case 'i':
            sum += static_cast<double>(fields.integer("field"));
            break;
          case 'r':
            sum += fields.real("field");
            break;
          default:
            sum += static_cast<double>(fields.text("field").size());
        }
      } while (repeat && !fields.at_end());
      if (repeat) break;
    }
    fields.expect_end();
  }
  return sum;
}

// The fastest of `repeats` runs of `run`, in seconds.
double best_of(int repeats, const std::function<void()>& run) {
  double best_seconds = 0;
  for (int r = 0; r < repeats; ++r) {
    const Stopwatch clock;
    run();
    const double seconds = clock.seconds();
    if (r == 0 || seconds < best_seconds) best_seconds = seconds;
  }
  return best_seconds;
}

nlohmann::json scan_layout(const Layout& layout, int repeats) {
  double sum = 0;
  const double seconds = best_of(repeats, [&] {
    sum = 0;
    for (const TextFile& file : layout.files) sum += scan(file);
  });
  const double megabytes = static_cast<double>(bytes_under(layout.text)) / 1e6;
  std::printf("  %-14s scan, 1 thread: %7.1f MB of text in %6.3f s = %7.1f MB/s (checksum %.6g)\n",
              layout.name.c_str(), megabytes, seconds, megabytes / seconds, sum);
  return {{"layout", layout.name}, {"scan", true},
          {"threads", 1},          {"text_bytes", bytes_under(layout.text)},
          {"seconds", seconds},    {"megabytes_per_second", megabytes / seconds}};
}

nlohmann::json time_layout(const Layout& layout, int threads, int repeats) {
  const std::int64_t bytes = bytes_under(layout.input);
  const std::int64_t text_bytes = bytes_under(layout.text);
  const bool peak_restarts = restart_peak_rss();
  std::int64_t nodes = 0;
  const double seconds = best_of(repeats, [&] { nodes = layout.load(); });
  const std::int64_t peak = peak_rss_bytes();
  const double megabytes = static_cast<double>(text_bytes) / 1e6;
  std::printf(
      "  %-14s load, %d thread(s): %7.1f MB of text in %6.3f s = %7.1f MB/s, %lld nodes, peak RSS "
      "%.0f MB%s\n",
      layout.name.c_str(), threads, megabytes, seconds, megabytes / seconds,
      static_cast<long long>(nodes), static_cast<double>(peak) / 1e6,
      peak_restarts ? "" : " (process-wide)");
  return {{"layout", layout.name},
          {"threads", threads},
          {"input_bytes", bytes},
          {"text_bytes", text_bytes},
          {"seconds", seconds},
          {"megabytes_per_second", megabytes / seconds},
          {"nodes", nodes},
          {"peak_rss_bytes", peak},
          {"peak_rss_per_layout", peak_restarts}};
}

int bench_main(int argc, char** argv) {
  po::options_description options("bench_loaders [options]");
  options.add_options()("help,h", "show this help")(
      "dir", po::value<std::string>()->default_value(""),
      "folder for the generated files (kept); default: a temporary folder, removed after")(
      "scale", po::value<double>()->default_value(1.0), "size of every generated layout")(
      "threads", po::value<std::string>()->default_value("1,2"), "OpenMP thread counts to run")(
      "repeats", po::value<int>()->default_value(3), "loads per layout; the fastest is kept")(
      "reuse", po::bool_switch(), "time the files a previous run left under --dir, writing none")(
      "layouts", po::value<std::string>()->default_value(""),
      "comma-separated layouts to time (planetoid-tsv, edge-list, ogb-csv, ogb-csv-gz); default "
      "all");
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const double scale = vm["scale"].as<double>();
  const int repeats = vm["repeats"].as<int>();
  require(scale > 0 && scale <= 100, "scale", "must be in (0, 100]");
  require(repeats > 0, "repeats", "must be positive");
  std::vector<int> thread_counts;
  JsonFieldReader({{"threads", vm["threads"].as<std::string>()}}, "")
      .read("threads", thread_counts);
  for (const int threads : thread_counts) require(threads > 0, "threads", "must be positive");
  const std::string wanted = "," + vm["layouts"].as<std::string>() + ",";

  const bool temporary = vm["dir"].as<std::string>().empty();
  const std::filesystem::path root = temporary ? std::filesystem::temp_directory_path() /
                                                     ("bench_loaders." + std::to_string(::getpid()))
                                               : std::filesystem::path(vm["dir"].as<std::string>());
  require(!vm["reuse"].as<bool>() || !temporary, "reuse", "needs --dir");
  if (!vm["reuse"].as<bool>()) {
    const Stopwatch generation;
    write_planetoid(root / "planetoid", scale);
    write_edge_list(root / "edges.txt", scale);
    write_ogb(root / "ogb", root / "ogb_gz", scale);
    std::printf("generated %.1f MB under %s in %.1f s\n",
                static_cast<double>(bytes_under(root)) / 1e6, root.c_str(), generation.seconds());
  }

  std::vector<Layout> chosen;
  for (Layout& layout : layouts(root)) {
    if (wanted == ",," || wanted.find("," + layout.name + ",") != std::string::npos) {
      chosen.push_back(std::move(layout));
    }
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const Layout& layout : chosen) runs.push_back(scan_layout(layout, repeats));
  for (const int threads : thread_counts) {
    omp_set_num_threads(threads);
    for (const Layout& layout : chosen) runs.push_back(time_layout(layout, threads, repeats));
  }
  if (temporary) std::filesystem::remove_all(root);
  std::cout << nlohmann::json{{"benchmark", "loaders"},
                              {"scale", scale},
                              {"repeats", repeats},
                              {"runs", runs},
                              {"provenance", provenance_json(argc, argv)}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_loaders", bench_main, argc, argv); }
