// JsonValue: a small JSON reader and writer for the simulator's workload and record files.
// The schedulers library depends on core only (nlohmann-json lives in workflows/ and cli/), and the
// simulator must be usable by applications linking chorus::chorus, so it carries this
// ~200-line reader. RFC 8259 minus \u surrogate pairs outside the BMP (kept as given).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/status.hpp"

namespace chorus::sim {

class JsonValue {
 public:
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;  // in file order

  JsonValue() = default;  // null
  explicit JsonValue(bool b) : v_(b) {}
  explicit JsonValue(double d) : v_(d) {}
  explicit JsonValue(std::string s) : v_(std::move(s)) {}
  explicit JsonValue(Array a) : v_(std::move(a)) {}
  explicit JsonValue(Object o) : v_(std::move(o)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_number() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  bool is_object() const { return std::holds_alternative<Object>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  double as_number() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }

  // The member `key` of an object, or nullptr (also for non-objects).
  const JsonValue* find(std::string_view key) const;

  // Errors: invalid_argument "<source>:<line>:<col>: <what>".
  static Result<JsonValue> parse(std::string_view text, const std::string& source);

 private:
  std::variant<std::monostate, bool, double, std::string, Array, Object> v_;
};

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);
// A number as JSON (finite; non-finite values become null).
std::string json_number(double d);

}  // namespace chorus::sim
