// Parsing and checking of spec.kueue.
#include "kueue/config.h"

#include <cctype>
#include <set>

namespace tpu::kueue {
namespace {

Status FieldError(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("spec.kueue." + field + ": " + what);
}

bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-' || c == '.')) {
      return false;
    }
  }
  return std::isalnum(static_cast<unsigned char>(s.front())) &&
         std::isalnum(static_cast<unsigned char>(s.back()));
}

}  // namespace

bool ParseDuration(const std::string& text, std::chrono::seconds* out) {
  long long total = 0, n = 0;
  bool digits = false;
  if (text.empty()) return false;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      n = n * 10 + (c - '0');
      digits = true;
      continue;
    }
    if (!digits) return false;
    if (c == 'h') total += n * 3600;
    else if (c == 'm') total += n * 60;
    else if (c == 's') total += n;
    else return false;
    n = 0;
    digits = false;
  }
  if (digits) return false;  // a number without a unit
  *out = std::chrono::seconds(total);
  return true;
}

KueueConfig KueueConfigFromPolicy(const manifest::KueuePolicy& policy) {
  KueueConfig c;
  c.cluster_queue = policy.cluster_queue;
  c.cohort = policy.cohort;
  c.hold = policy.hold_queue ? HoldPolicy::kHold : HoldPolicy::kNone;
  if (policy.ready_mode) c.mode = QuotaMode::kReady;
  if (!policy.flavor_name.empty()) c.flavor_name = policy.flavor_name;
  // The schema checked the spelling; an unparsable value keeps the default.
  if (!policy.scale_down_timeout.empty()) ParseDuration(policy.scale_down_timeout, &c.scale_down_timeout);
  if (!policy.wait_for_workloads) c.scale_down_timeout = std::chrono::seconds(0);
  return c;
}

Result<KueueConfig> ParseKueueConfig(const nlohmann::json& spec) {
  if (!spec.is_object()) return Status::InvalidArgument("spec.kueue: expected a mapping");
  static const std::set<std::string> kKnown = {"clusterQueue", "cohort", "resource", "flavorName",
                                               "mode", "scaleDown", "apiVersion", "eventNamespace"};
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (!kKnown.count(it.key())) return FieldError(it.key(), "unknown field");
  }
  auto str = [&](const char* key, std::string* into) -> Status {
    if (!spec.contains(key)) return Status::OK();
    if (!spec[key].is_string()) return FieldError(key, "expected a string");
    *into = spec[key].get<std::string>();
    return Status::OK();
  };
  KueueConfig c;
  std::string mode = "declared", api = "auto";
  for (auto [key, into] : std::initializer_list<std::pair<const char*, std::string*>>{
           {"clusterQueue", &c.cluster_queue}, {"cohort", &c.cohort}, {"resource", &c.resource},
           {"flavorName", &c.flavor_name}, {"mode", &mode}, {"apiVersion", &api},
           {"eventNamespace", &c.event_namespace}}) {
    if (Status s = str(key, into); !s.ok()) return s;
  }
  if (c.cluster_queue.empty() == c.cohort.empty()) {
    return Status::InvalidArgument("spec.kueue: set exactly one of clusterQueue and cohort");
  }
  const char* which = c.cohort_mode() ? "cohort" : "clusterQueue";
  if (!IsDnsSubdomain(c.queue_name())) {
    return FieldError(which, "expected a lower-case DNS name, got \"" + c.queue_name() + "\"");
  }
  if (mode == "declared") c.mode = QuotaMode::kDeclared;
  else if (mode == "ready") c.mode = QuotaMode::kReady;
  else return FieldError("mode", "expected declared or ready, got \"" + mode + "\"");
  if (api == "auto") c.api_version.clear();
  else if (api == "v1beta2" || api == "v1beta1") c.api_version = api;
  else return FieldError("apiVersion", "expected auto, v1beta2 or v1beta1, got \"" + api + "\"");
  if (c.flavor_name.find("{topology}") == std::string::npos) {
    return FieldError("flavorName", "must contain {topology}, or two shapes would share a flavor");
  }
  if (spec.contains("scaleDown")) {
    const auto& sd = spec["scaleDown"];
    if (!sd.is_object()) return FieldError("scaleDown", "expected a mapping");
    for (auto it = sd.begin(); it != sd.end(); ++it) {
      if (it.key() != "stopPolicy" && it.key() != "timeout") {
        return FieldError("scaleDown." + it.key(), "unknown field");
      }
    }
    if (sd.contains("stopPolicy")) {
      std::string p = sd["stopPolicy"].is_string() ? sd["stopPolicy"].get<std::string>() : "";
      if (p == "None") c.hold = HoldPolicy::kNone;
      else if (p == "Hold") c.hold = HoldPolicy::kHold;
      else if (p == "HoldAndDrain") c.hold = HoldPolicy::kHoldAndDrain;
      else return FieldError("scaleDown.stopPolicy", "expected None, Hold or HoldAndDrain");
    }
    if (sd.contains("timeout")) {
      if (!sd["timeout"].is_string() || !ParseDuration(sd["timeout"].get<std::string>(), &c.scale_down_timeout)) {
        return FieldError("scaleDown.timeout", "expected a duration such as 30m or 1h");
      }
    }
  }
  return c;
}

}  // namespace tpu::kueue
