// ParseComputeFilter and ComputeFilter::Matches (compute_filter.h).
#include "sim/compute_filter.h"

namespace tpu::sim {
namespace {

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool IsFieldName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

bool ComputeFilter::Matches(const nlohmann::json& item) const {
  auto it = item.find(field);
  if (it == item.end()) return !equal;
  const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  return (text == value) == equal;
}

std::optional<ApiError> ParseComputeFilter(const std::string& text, std::optional<ComputeFilter>* out) {
  std::string s = Trim(text);
  if (s.empty()) return std::nullopt;
  auto refuse = [&] {
    return BadRequest("Invalid value for field 'filter': '" + text +
                      "'. The emulator supports one comparison of a top-level field: FIELD = VALUE or "
                      "FIELD != VALUE.");
  };
  if (s.front() == '(' && s.back() == ')') s = Trim(s.substr(1, s.size() - 2));
  ComputeFilter f;
  size_t op = s.find("!=");
  size_t op_len = 2;
  f.equal = op == std::string::npos;
  if (f.equal) {
    op = s.find('=');
    op_len = 1;
  }
  if (op == std::string::npos) return refuse();
  f.field = Trim(s.substr(0, op));
  f.value = Trim(s.substr(op + op_len));
  if (f.value.size() >= 2 && f.value.front() == '"' && f.value.back() == '"') f.value = f.value.substr(1, f.value.size() - 2);
  if (!IsFieldName(f.field) || f.value.empty() || f.value.find_first_of("()<>=!:") != std::string::npos) return refuse();
  *out = std::move(f);
  return std::nullopt;
}

}  // namespace tpu::sim
