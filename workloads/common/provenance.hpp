#pragma once
// Every result file records how it was made: the command line, the git revision of the source,
// the versions of the libraries linked in, the host and the time.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gnnbed {

// The revision of the source tree this binary was built from (`git describe --always --dirty`).
std::string git_revision();

// The command line as one shell-quoted string.
std::string command_line(int argc, const char* const* argv);

// {command, git_revision, compiler, host, time_utc, versions: {...}}; callers add the versions of
// the libraries they link (`versions["openmpi"] = ...`) before writing the result.
nlohmann::json provenance_json(int argc, const char* const* argv);

}  // namespace gnnbed
