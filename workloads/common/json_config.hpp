#pragma once
// Reading typed configuration structs from JSON with errors that name the field: every struct's
// reader walks its object with a JsonFieldReader, which rejects unknown fields and wrong types.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "workloads/common/errors.hpp"

namespace gnnbed {

class JsonFieldReader {
 public:
  // `where` prefixes field names in errors ("training" -> "training.lr"); `object` must be a JSON
  // object (ConfigError otherwise).
  JsonFieldReader(const nlohmann::json& object, std::string where);

  // Reads `key` into `field` if present (leaving it unchanged otherwise).
  void read(std::string_view key, bool& field);
  void read(std::string_view key, int& field);
  void read(std::string_view key, std::int64_t& field);
  void read(std::string_view key, std::uint64_t& field);
  void read(std::string_view key, double& field);
  void read(std::string_view key, float& field);
  void read(std::string_view key, std::string& field);
  // A number, or null for "unset".
  void read(std::string_view key, std::optional<double>& field);
  // An integer, or null for "unset".
  void read(std::string_view key, std::optional<int>& field);
  // Accepts an array of integers or a comma-separated string ("25,10").
  void read(std::string_view key, std::vector<int>& field);

  // The sub-object at `key` (null json if absent), marking the key as known.
  const nlohmann::json* child(std::string_view key);

  // Throws ConfigError for any field that no read() asked for, listing the known ones.
  void finish() const;

  std::string path(std::string_view key) const;

 private:
  const nlohmann::json* find(std::string_view key);

  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string, std::less<>> known_;
};

// Parses a JSON document; a syntax error becomes InputError naming the file, line and column.
nlohmann::json parse_json_file(const std::filesystem::path& path);
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

// Sets the field at dotted `path` ("training.lr") to `value_text`, read as JSON when it is valid
// JSON (numbers, true/false, arrays) and as a string otherwise. Creates intermediate objects. In a
// list, a part of the path is an index ("deviations.0.rank"); the index one past the end appends.
void set_json_path(nlohmann::json& document, std::string_view path, std::string_view value_text);

// A command-line option that sets one field of a configuration document: `--hidden 64` is
// `--set model.hidden=64` (workloads/common/command_line.hpp declares them).
struct ConfigOption {
  const char* name;
  const char* path;
  const char* help;
};

// The configuration document described by `defaults` (assignments such as "model.hidden=64", a
// program's own defaults), overridden by an optional JSON file (an object), overridden by
// `assignments` in order. Errors name the file (InputError) or the assignment (ConfigError); the
// fields are the reader's to check.
nlohmann::json resolve_config_document(const std::filesystem::path& config_file,
                                       const std::vector<std::string>& assignments,
                                       const std::vector<std::string>& defaults = {});

// Throws ConfigError(field, ...) unless `value` is one of `allowed`.
void require_one_of(const std::string& field, const std::string& value,
                    const std::vector<std::string>& allowed);

// `value` as an integer of type T: ConfigError naming `field` unless it is a JSON integer within
// T's range. nlohmann's own get<T>() casts a floating-point number (1e300) to T, which is
// undefined behaviour outside T's range, and wraps integers that do not fit.
template <typename T>
T json_integer(const nlohmann::json& value, const std::string& field) {
  static_assert(std::is_integral_v<T>, "json_integer reads integers");
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      return static_cast<T>(number);
    }
  } else if (value.is_number_integer()) {
    const auto number = value.get<std::int64_t>();
    if (number >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
        (number < 0 || static_cast<std::uint64_t>(number) <=
                           static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
      return static_cast<T>(number);
    }
  }
  throw ConfigError(
      field, "expected an integer in [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
                 std::to_string(std::numeric_limits<T>::max()) + "], got " + value.dump());
}

// A JSON list of integers of type T, each checked as json_integer does.
template <typename T>
void json_integers_to(const nlohmann::json& value, const std::string& field, std::vector<T>& out) {
  if (!value.is_array()) throw ConfigError(field, "expected a list of integers");
  std::vector<T> numbers;
  numbers.reserve(value.size());
  for (const nlohmann::json& element : value) numbers.push_back(json_integer<T>(element, field));
  out = std::move(numbers);
}

// object[key] as json_integer, or `fallback` when the object has no such key.
template <typename T>
T json_integer_or(const nlohmann::json& object, const std::string& key, T fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : json_integer<T>(*it, key);
}

}  // namespace gnnbed
