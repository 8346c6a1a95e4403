#pragma once
// Output files appear whole or not at all: content goes to a temporary file beside the target,
// which is renamed over it only once everything was written and flushed.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace gnnbed {

// Calls `write` with a stream on a temporary file, then renames it to `path`. If `write` throws
// or the stream fails, the temporary is removed, `path` is untouched, and the error propagates.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

void write_text_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace gnnbed
