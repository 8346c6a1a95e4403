#pragma once
// A read-only array that either owns its values or views storage owned by someone else (most often
// a memory-mapped file), kept alive by a shared owner. Copies are cheap and share the storage.
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace gnnbed {

template <typename T>
class SharedArray {
 public:
  SharedArray() = default;

  explicit SharedArray(std::vector<T> values) {
    auto owned = std::make_shared<const std::vector<T>>(std::move(values));
    view_ = std::span<const T>(owned->data(), owned->size());
    owner_ = std::move(owned);
  }

  SharedArray(std::span<const T> view, std::shared_ptr<const void> owner)
      : view_(view), owner_(std::move(owner)) {}

  std::span<const T> span() const { return view_; }
  const T* data() const { return view_.data(); }
  std::size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  const T& operator[](std::size_t i) const { return view_[i]; }
  auto begin() const { return view_.begin(); }
  auto end() const { return view_.end(); }

 private:
  std::span<const T> view_;
  std::shared_ptr<const void> owner_;
};

}  // namespace gnnbed
