#include "workloads/common/provenance.hpp"

#include <unistd.h>
#include <zlib.h>

#include <boost/version.hpp>
#include <ctime>

namespace gnnbed {
namespace {

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789_-+=./:,@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

std::string command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(argv[i]);
  }
  return line;
}

nlohmann::json provenance_json(int argc, const char* const* argv) {
  nlohmann::json versions;
  versions["gnnbed"] = GNNBED_VERSION;
  versions["zlib"] = zlibVersion();
  versions["boost"] = BOOST_LIB_VERSION;
  versions["nlohmann_json"] = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                              std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                              std::to_string(NLOHMANN_JSON_VERSION_PATCH);
  return {{"command", command_line(argc, argv)},
          {"git_revision", git_revision()},
          {"compiler", std::string("g++ ") + __VERSION__},
          {"host", host_name()},
          {"time_utc", utc_now()},
          {"versions", versions}};
}

}  // namespace gnnbed
