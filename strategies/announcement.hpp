#pragma once
// What a rank announces to each of its peers before planning an iteration (strategy.hpp), or
// what it received from each: one payload of int32 values per peer, empty when there is none.
//
// Payloads are shared rather than copied. P3 announces one computation graph to every peer, and
// the simulator plans every rank of hundreds of machines in one process, where a copy per peer
// would hold ranks² payloads at once.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gnnbed {

using AnnouncementPayload = std::shared_ptr<const std::vector<std::int32_t>>;

class Announcement {
 public:
  Announcement() = default;
  explicit Announcement(std::size_t num_peers) : payloads_(num_peers, empty()) {}
  // One payload per peer, moved in.
  explicit Announcement(std::vector<std::vector<std::int32_t>> payloads) {
    payloads_.reserve(payloads.size());
    for (auto& payload : payloads) {
      payloads_.push_back(std::make_shared<const std::vector<std::int32_t>>(std::move(payload)));
    }
  }

  std::size_t size() const { return payloads_.size(); }
  const std::vector<std::int32_t>& operator[](std::size_t peer) const { return *payloads_[peer]; }
  // The payload itself, to share it further (a plan's index tensor, another rank's receipt).
  const AnnouncementPayload& shared(std::size_t peer) const { return payloads_[peer]; }
  void set(std::size_t peer, AnnouncementPayload payload) {
    payloads_[peer] = payload ? std::move(payload) : empty();
  }

 private:
  static const AnnouncementPayload& empty() {
    static const AnnouncementPayload none = std::make_shared<const std::vector<std::int32_t>>();
    return none;
  }

  std::vector<AnnouncementPayload> payloads_;
};

}  // namespace gnnbed
