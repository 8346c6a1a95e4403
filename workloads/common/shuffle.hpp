#pragma once
// Seeded shuffling. (Apart from random.hpp, which CUDA device code includes without C++20.)
#include <cstddef>
#include <span>
#include <utility>

#include "workloads/common/random.hpp"

namespace gnnbed {

// Fisher-Yates: every order of `items` equally likely, drawn from `rng`.
template <typename T>
void shuffle(std::span<T> items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[static_cast<std::size_t>(rng.below(i))]);
  }
}

}  // namespace gnnbed
