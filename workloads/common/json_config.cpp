#include "workloads/common/json_config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace gnnbed {
namespace {

std::string type_name(const nlohmann::json& value) { return value.type_name(); }

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

}  // namespace

JsonFieldReader::JsonFieldReader(const nlohmann::json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) {
    throw ConfigError(where_.empty() ? "(top level)" : where_,
                      "expected an object, got " + type_name(object_));
  }
}

std::string JsonFieldReader::path(std::string_view key) const {
  return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
}

const nlohmann::json* JsonFieldReader::find(std::string_view key) {
  known_.emplace(key);
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void JsonFieldReader::read(std::string_view key, bool& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (!value->is_boolean())
    throw ConfigError(path(key), "expected true or false, got " + value->dump());
  field = value->get<bool>();
}

void JsonFieldReader::read(std::string_view key, std::int64_t& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (value->is_number_integer()) {
    field = json_integer<std::int64_t>(*value, path(key));
    return;
  }
  // A whole number written as a float ("64.0", "1e6"); the range check comes before the cast,
  // which is undefined beyond the type's range.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (value->is_number_float()) {
    const double number = value->get<double>();
    if (number >= -kTwoTo63 && number < kTwoTo63 && number == std::floor(number)) {
      field = static_cast<std::int64_t>(number);
      return;
    }
  }
  throw ConfigError(path(key), "expected an integer, got " + value->dump());
}

void JsonFieldReader::read(std::string_view key, int& field) {
  std::int64_t wide = field;
  read(key, wide);
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    throw ConfigError(path(key), std::to_string(wide) + " is out of range");
  }
  field = static_cast<int>(wide);
}

void JsonFieldReader::read(std::string_view key, std::uint64_t& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (!value->is_number_unsigned()) {
    throw ConfigError(path(key), "expected a non-negative integer, got " + value->dump());
  }
  field = value->get<std::uint64_t>();
}

void JsonFieldReader::read(std::string_view key, double& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (!value->is_number()) throw ConfigError(path(key), "expected a number, got " + value->dump());
  field = value->get<double>();
}

void JsonFieldReader::read(std::string_view key, float& field) {
  double wide = field;
  read(key, wide);
  if (std::isfinite(wide) && std::fabs(wide) > std::numeric_limits<float>::max()) {
    throw ConfigError(path(key), std::to_string(wide) + " is beyond float32's range");
  }
  field = static_cast<float>(wide);
}

void JsonFieldReader::read(std::string_view key, std::optional<double>& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (value->is_null()) {
    field.reset();
    return;
  }
  if (!value->is_number())
    throw ConfigError(path(key), "expected a number or null, got " + value->dump());
  field = value->get<double>();
}

void JsonFieldReader::read(std::string_view key, std::optional<int>& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (value->is_null()) {
    field.reset();
    return;
  }
  int set = 0;
  read(key, set);
  field = set;
}

void JsonFieldReader::read(std::string_view key, std::string& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  if (!value->is_string()) throw ConfigError(path(key), "expected a string, got " + value->dump());
  field = value->get<std::string>();
}

void JsonFieldReader::read(std::string_view key, std::vector<int>& field) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return;
  std::vector<int> numbers;
  if (value->is_array()) {
    for (const auto& element : *value) {
      if (!element.is_number_integer()) {
        throw ConfigError(path(key), "expected a list of integers, got " + value->dump());
      }
      numbers.push_back(json_integer<int>(element, path(key)));
    }
  } else if (value->is_string()) {
    const std::string text = value->get<std::string>();
    std::string_view rest = text;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view word = rest.substr(0, comma);
      int number = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), number);
      if (word.empty() || error != std::errc() || end != word.data() + word.size()) {
        throw ConfigError(path(key), "'" + text + "' is not a comma-separated list of integers");
      }
      numbers.push_back(number);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (comma != std::string_view::npos && rest.empty()) {
        throw ConfigError(path(key), "'" + text + "' ends with a comma");
      }
    }
  } else if (value->is_number_integer()) {
    numbers.push_back(json_integer<int>(*value, path(key)));
  } else {
    throw ConfigError(path(key), "expected a list of integers, got " + value->dump());
  }
  field = std::move(numbers);
}

const nlohmann::json* JsonFieldReader::child(std::string_view key) { return find(key); }

void JsonFieldReader::finish() const {
  for (const auto& [key, value] : object_.items()) {
    if (known_.find(key) == known_.end()) {
      throw ConfigError(path(key),
                        "unknown field (known: " +
                            joined(std::vector<std::string>(known_.begin(), known_.end())) + ")");
    }
  }
}

nlohmann::json parse_json_text(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    std::int64_t line = 1;
    std::int64_t column = 1;
    const std::size_t stop =
        std::min<std::size_t>(error.byte > 0 ? error.byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < stop; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 22:
    // syntax error while parsing value - invalid literal; last read: 'N'". The position is ours.
    std::string message = error.what();
    if (const auto position = message.find(", column "); position != std::string::npos) {
      if (const auto colon = message.find(": ", position); colon != std::string::npos)
        message = message.substr(colon + 2);
    }
    throw InputError(origin, line, "column " + std::to_string(column), "invalid JSON: " + message);
  } catch (const nlohmann::json::exception& error) {
    // Valid syntax nlohmann cannot hold, such as a number beyond a double ("1e999"); it names the
    // text but not where it is.
    throw InputError(origin, 0, "", std::string("unreadable JSON: ") + error.what());
  }
}

nlohmann::json parse_json_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path.string(), 0, "", "is a folder, not a JSON file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, "", "cannot open");
  std::ostringstream content;
  content << in.rdbuf();
  if (content.str().empty()) throw InputError(path.string(), 0, "", "file is empty");
  return parse_json_text(content.str(), path.string());
}

namespace {

// Whether a part of a set_json_path path is a list index.
bool is_index(const std::string& key) {
  return !key.empty() && key.size() < 10 &&
         std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Element `key` of `array` for set_json_path: an existing index, or the one past the end, which
// appends an element.
nlohmann::json& array_element(nlohmann::json& array, const std::string& key,
                              std::string_view path) {
  const std::size_t index = is_index(key) ? std::stoul(key) : array.size() + 1;
  if (index > array.size()) {
    throw ConfigError(std::string(path), "'" + key + "' is not an element of a list of " +
                                             std::to_string(array.size()) +
                                             " (an index from 0, or the next one to append)");
  }
  if (index == array.size()) array.push_back(nlohmann::json::object());
  return array[index];
}

}  // namespace

void set_json_path(nlohmann::json& document, std::string_view path, std::string_view value_text) {
  nlohmann::json* node = &document;
  std::string_view rest = path;
  for (;;) {
    const auto dot = rest.find('.');
    const std::string key(rest.substr(0, dot));
    if (key.empty()) throw ConfigError(std::string(path), "is not a valid field path");
    // An absent list is created by its first index ("deviations.0.rank").
    if (node->is_null() && is_index(key)) *node = nlohmann::json::array();
    if (node->is_array()) {
      node = &array_element(*node, key, path);
    } else {
      if (!node->is_object()) *node = nlohmann::json::object();
      node = &(*node)[key];
    }
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  nlohmann::json value = nlohmann::json::parse(value_text, nullptr, /*allow_exceptions=*/false);
  *node = value.is_discarded() ? nlohmann::json(std::string(value_text)) : value;
}

namespace {

void apply_assignments(nlohmann::json& document, const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw ConfigError(assignment, "expected FIELD=VALUE, e.g. model.hidden=64");
    }
    set_json_path(document, std::string_view(assignment).substr(0, equals),
                  std::string_view(assignment).substr(equals + 1));
  }
}

}  // namespace

nlohmann::json resolve_config_document(const std::filesystem::path& config_file,
                                       const std::vector<std::string>& assignments,
                                       const std::vector<std::string>& defaults) {
  nlohmann::json document = nlohmann::json::object();
  apply_assignments(document, defaults);
  if (!config_file.empty()) {
    const nlohmann::json file = parse_json_file(config_file);
    if (!file.is_object()) {
      throw InputError(config_file.string(), 0, "", "expected a JSON object at the top level");
    }
    document.merge_patch(file);
  }
  apply_assignments(document, assignments);
  return document;
}

void require_one_of(const std::string& field, const std::string& value,
                    const std::vector<std::string>& allowed) {
  for (const auto& candidate : allowed) {
    if (value == candidate) return;
  }
  throw ConfigError(field, "'" + value + "' is not one of: " + joined(allowed));
}

}  // namespace gnnbed
