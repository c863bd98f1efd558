// Status and Result<T>: how expected failures travel in Chorus.
//
// Contract: functions that can fail for reasons a user can act on (bad input, a launch rejected, a
// node lost, an I/O error) return Status or Result<T>; exceptions are reserved for programmer
// errors and start-up. The code separates "not now" (unavailable: retry later) from "never"
// (unsatisfiable: reject at once), as the scheduler and launchers need that distinction.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace chorus {

enum class ErrorCode {
  ok,
  invalid_argument,  // bad input: a workflow file, an option, a spec
  not_found,         // a run, task, file or name that does not exist
  unavailable,       // "not now": resources busy, service not ready; retrying may succeed
  unsatisfiable,     // "never": no node can ever run this
  io_error,          // the OS said no (errno text in the message)
  cancelled,
  internal,
};

const char* to_string(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == ErrorCode::ok; }
  explicit operator bool() const { return ok(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::ok;
  std::string message_;
};

inline Status invalid_argument(std::string message) {
  return {ErrorCode::invalid_argument, std::move(message)};
}
inline Status not_found(std::string message) {
  return {ErrorCode::not_found, std::move(message)};
}
inline Status io_error(std::string message) {
  return {ErrorCode::io_error, std::move(message)};
}
inline Status internal_error(std::string message) {
  return {ErrorCode::internal, std::move(message)};
}

// Result<T>: a value or a non-ok Status. Accessing value() of an error is a programmer error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(data_).ok() && "Result constructed from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error; an ok Status when this holds a value.
  Status status() const { return ok() ? Status{} : std::get<Status>(data_); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace chorus
