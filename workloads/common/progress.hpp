#pragma once
// Progress of long passes (generating or writing a billion-edge graph): called now and then with
// (units done, units in all).
#include <cstdint>
#include <functional>
#include <string>

namespace gnnbed {

using ProgressCallback = std::function<void(std::int64_t, std::int64_t)>;

// The same for a sequence of named steps: (step, units done, units in all).
using StepProgress = std::function<void(const std::string&, std::int64_t, std::int64_t)>;

// A StepProgress that prints a line to stderr for every step at most every 10 % (and its end),
// prefixed by `program`: what the command-line tools show while a large graph is generated.
StepProgress stderr_step_progress(const std::string& program);

}  // namespace gnnbed
