#pragma once
// Poisson draws as a pure function of a seed, exact for every mean (no normal approximation).
#include <cstdint>

namespace gnnbed {

// A Poisson(mean) draw from the generator seeded with `seed`; mean >= 0 and finite.
std::int64_t poisson(double mean, std::uint64_t seed);

}  // namespace gnnbed
