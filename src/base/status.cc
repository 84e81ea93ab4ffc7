// Status rendering.
#include "base/status.h"

namespace tpu {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kInvalidArgument: return "InvalidArgument";
    case Status::Code::kNotFound: return "NotFound";
    case Status::Code::kAlreadyExists: return "AlreadyExists";
    case Status::Code::kFailedPrecondition: return "FailedPrecondition";
    case Status::Code::kPermissionDenied: return "PermissionDenied";
    case Status::Code::kResourceExhausted: return "ResourceExhausted";
    case Status::Code::kUnavailable: return "Unavailable";
    case Status::Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Status::Code::kIoError: return "IoError";
    case Status::Code::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace tpu
