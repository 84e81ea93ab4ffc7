// Status and Result<T>: errors as values across module lines.
//
// A Status is OK or carries a code and a "context: cause" message; OK holds
// nothing. Result<T> is a value or a non-OK Status. Callers propagate with
// `if (!s.ok()) return s;`. Both are cheap to move and safe to copy.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tpu {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,   // bad input: a manifest, a flag, a request body
    kNotFound,
    kAlreadyExists,
    kFailedPrecondition,
    kPermissionDenied,
    kResourceExhausted,  // quota, rate limits, stockouts
    kUnavailable,        // transient: 5xx, dropped connections; retry
    kDeadlineExceeded,
    kIoError,
    kInternal,
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: message", or "OK".
  std::string ToString() const;
  // A copy whose message is "context: <message>".
  Status WithContext(const std::string& context) const;

  bool operator==(const Status& o) const { return code_ == o.code_ && message_ == o.message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* CodeName(Status::Code code);

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  // REQUIRES: status is not OK (an OK Result must hold a value).

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tpu
