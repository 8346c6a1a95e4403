#pragma once
// Checks that `action` throws InputError naming `file_name` (the file's name, without its
// directory), `line` (0: not tied to one line) and `field` (empty: the whole file), with a message
// that says where and contains `problem`.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "workloads/common/errors.hpp"

namespace gnnbed::testing {

template <typename Action>
void expect_input_error(Action action, const std::string& file_name, std::int64_t line,
                        const std::string& field, const std::string& problem) {
  try {
    action();
    ADD_FAILURE() << "no InputError for " << file_name << ":" << line << " field '" << field << "'";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_EQ(std::filesystem::path(error.file()).filename().string(), file_name) << message;
    EXPECT_EQ(error.line(), line) << message;
    EXPECT_EQ(error.field(), field) << message;
    const std::string place = line > 0 ? file_name + ":" + std::to_string(line) : file_name;
    EXPECT_NE(message.find(place), std::string::npos) << message;
    if (!field.empty()) {
      EXPECT_NE(message.find("field '" + field + "'"), std::string::npos) << message;
    }
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  }
}

}  // namespace gnnbed::testing
