#pragma once
// Failures during a replay (ClusterSpec::failures): at its time, a failed part of the platform
// is turned off, as SimGrid models a crash: a rank's device host (its actors die with it, and the
// replay stops those it had moved elsewhere), a machine's CPU and devices, or a link. Transfers
// that need a failed part then fail in the actors that wait for them; the replay (replay.cpp) stops
// the rank whose transfer failed, and ranks waiting on such a rank wait on. After the last failure
// and the cluster's detection time, the job is stopped: every actor is killed, as the transport's
// abort kills every rank.
#include <functional>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/platform.hpp"

namespace gnnbed {

// Starts, on the platform's observer host, the actor that applies `cluster`'s failures, calling
// `failed` after each. It is a daemon: when every rank is done (finished, or dead) before a
// failure's time, the replay ends and the failure never happens. Otherwise, the cluster's
// detection time after the last failure, it calls `stopping` and kills every actor. Needs the
// engine and the platform; does nothing when the cluster has no failures.
void start_failures(const ClusterSpec& cluster, const Platform& platform,
                    std::function<void(const PartFailure&)> failed, std::function<void()> stopping);

// Turns the failed part off.
void turn_off_part(const PartFailure& failure, const ClusterSpec& cluster,
                   const Platform& platform);

}  // namespace gnnbed
