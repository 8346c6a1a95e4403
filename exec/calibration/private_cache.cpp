#include "exec/calibration/private_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gnnbed {

double private_cache_bytes() {
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  double largest = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(caches, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    std::ifstream type_file(entry.path() / "type");
    std::ifstream size_file(entry.path() / "size");
    std::ifstream shared_file(entry.path() / "shared_cpu_list");
    std::string type, size, shared;
    if (!(type_file >> type) || !(size_file >> size) || !(shared_file >> shared)) continue;
    // One core only ("0"), holding data; sizes are written as "1024K" or "32M".
    if (type == "Instruction" || shared.find_first_of(",-") != std::string::npos) continue;
    char* end = nullptr;
    double bytes = std::strtod(size.c_str(), &end);
    if (*end == 'K') bytes *= 1024;
    if (*end == 'M') bytes *= 1024 * 1024;
    largest = std::max(largest, bytes);
  }
  return largest;
}

}  // namespace gnnbed
