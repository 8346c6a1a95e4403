#pragma once
// Deterministic randomness. Every random choice in gnnbed is a pure function of an explicit seed
// and a position (a counter), so results do not depend on thread count or iteration order:
// `hash_mix(seed, a, b, ...)` gives an independent 64-bit value per position, and `Rng` is a small
// sequential generator (xoshiro256**) for loops that draw many values from one position.
#include <cmath>
#include <cstdint>

namespace gnnbed {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t hash_mix(std::uint64_t seed) { return splitmix64(seed); }

// The pieces of hash_mix, for loops that hash many positions sharing a prefix (dropout: one row's
// node id, many column groups): hash_mix(seed, first, rest...) ==
// hash_mix(hash_mix_prefix(seed, first), rest...), and hash_mix_prefix(seed, first) ==
// splitmix64(seed ^ hash_mix_position(first)), where the position's part depends on `first` alone.
constexpr std::uint64_t hash_mix_position(std::uint64_t first) {
  return splitmix64(first + 0x632be59bd9b4e019ULL);
}
constexpr std::uint64_t hash_mix_prefix(std::uint64_t seed, std::uint64_t first) {
  return splitmix64(seed ^ hash_mix_position(first));
}

template <typename... Rest>
constexpr std::uint64_t hash_mix(std::uint64_t seed, std::uint64_t first, Rest... rest) {
  return hash_mix(hash_mix_prefix(seed, first), static_cast<std::uint64_t>(rest)...);
}

// Uniform float in [0, 1) from the top 24 bits of a hash.
// Dropout decides this many consecutive entries of a row (groups aligned on the feature matrix's
// columns) with 16 bits each of one hash_mix value, and leaves the groups that are all zero alone:
// the CPU and CUDA kernels do so, and the plans charge dropout by the groups it hashes.
inline constexpr int kDropoutGroupEntries = 4;

constexpr float unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

// Uniform double in [0, 1) from the top 53 bits of a hash.
constexpr double unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Standard normal from one 64-bit hash (Box-Muller on its two 32-bit halves).
inline float standard_normal(std::uint64_t bits) {
  const double u1 = (static_cast<double>(bits >> 32) + 1.0) * (1.0 / 4294967297.0);
  const double u2 = static_cast<double>(bits & 0xffffffffULL) * (1.0 / 4294967296.0);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

// 16-bit uniform draws from a SplitMix64 stream, four per output: R-MAT's per-level choices,
// which need only 2^-16 resolution, at a quarter of the hashing.
class Draws16 {
 public:
  explicit Draws16(std::uint64_t stream) : stream_(stream) {}
  std::uint64_t next() {
    if (left_ == 0) {
      stream_ += 0x9e3779b97f4a7c15ULL;
      bits_ = splitmix64(stream_);
      left_ = 4;
    }
    const std::uint64_t draw = bits_ & 0xffffU;
    bits_ >>= 16;
    --left_;
    return draw;
  }
  // Starts the next four-draw word, as a new stretch of the stream (a redrawn candidate).
  void skip_to_next_word() { left_ = 0; }

 private:
  std::uint64_t stream_;
  std::uint64_t bits_ = 0;
  int left_ = 0;
};

// GCC's 128-bit integer; __extension__ marks its use as deliberate under -Wpedantic.
__extension__ typedef unsigned __int128 Uint128;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) {
      seed = splitmix64(seed);
      word = seed;
    }
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform integer in [0, bound), bound > 0, without modulo bias (Lemire's multiply-shift).
  std::uint64_t below(std::uint64_t bound) {
    Uint128 product = static_cast<Uint128>(next_u64()) * bound;
    auto low = static_cast<std::uint64_t>(product);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        product = static_cast<Uint128>(next_u64()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

  double uniform() { return unit_double(next_u64()); }
  float normal() { return standard_normal(next_u64()); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace gnnbed
