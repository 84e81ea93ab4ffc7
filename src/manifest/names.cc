// The name rules of names.h, written out by hand: they run for every label of
// every pool, and a hand-written check says precisely what is wrong.
#include "manifest/names.h"

namespace tpu::manifest {
namespace {

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The name part of a qualified name (label key name, label value).
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s)
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// RFC 1123 DNS subdomain: dot-separated lowercase labels, ≤ 253 characters.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    std::string_view label = s.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back()))
      return false;
    for (char c : label)
      if (!IsLowerAlnum(c) && c != '-') return false;
    start = dot + 1;
    if (dot == s.size()) break;
  }
  return true;
}

constexpr const char* kNameRule =
    "at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

}  // namespace

std::string CheckLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!IsDnsSubdomain(prefix))
      return "expected a key prefix that is a DNS subdomain (lowercase, at most 253 characters) before '/'";
  }
  if (!IsQualifiedNamePart(name))
    return std::string("expected a key name of ") + kNameRule + ", with an optional DNS-subdomain prefix and '/'";
  return "";
}

std::string CheckLabelValue(std::string_view value) {
  if (value.empty() || IsQualifiedNamePart(value)) return "";
  return std::string("expected a value of ") + kNameRule + ", or empty";
}

std::string CheckResourceLabelKey(std::string_view key) {
  bool ok = !key.empty() && key.size() <= 63 && key.front() >= 'a' && key.front() <= 'z';
  for (char c : key) ok = ok && (IsLowerAlnum(c) || c == '_' || c == '-');
  return ok ? "" : "expected a GCP label key: at most 63 lowercase letters, digits, '_' or '-', starting with a letter";
}

std::string CheckResourceLabelValue(std::string_view value) {
  bool ok = value.size() <= 63;
  for (char c : value) ok = ok && (IsLowerAlnum(c) || c == '_' || c == '-');
  return ok ? "" : "expected a GCP label value: at most 63 lowercase letters, digits, '_' or '-'";
}

std::string CheckRfc1035(std::string_view name, size_t max) {
  bool ok = !name.empty() && name.front() >= 'a' && name.front() <= 'z' && name.back() != '-';
  for (char c : name) ok = ok && (IsLowerAlnum(c) || c == '-');
  if (!ok) return "expected an RFC 1035 name: lowercase letters, digits and '-', starting with a letter, not ending with '-'";
  if (name.size() > max)
    return "is " + std::to_string(name.size()) + " characters; expected at most " + std::to_string(max);
  return "";
}

std::string CheckProjectId(std::string_view id) {
  bool ok = id.size() >= 6 && id.size() <= 30 && id.front() >= 'a' && id.front() <= 'z' && id.back() != '-';
  for (char c : id) ok = ok && (IsLowerAlnum(c) || c == '-');
  return ok ? "" : "expected a GCP project id: 6 to 30 lowercase letters, digits or '-', starting with a letter, not ending with '-'";
}

}  // namespace tpu::manifest
