// Fault rules and their seeded decisions (see cloud_faults.h).
#include "sim/cloud_faults.h"

#include <tuple>

namespace tpu::sim {

Result<FaultConfig> FaultConfigFromJson(const json& j) {
  FaultConfig c;
  if (!j.is_object()) return Status::InvalidArgument("faults: expected an object");
  try {
    c.seed = j.value("seed", uint64_t{1});
    for (const auto& r : j.value("rules", json::array())) {
      FaultRule f;
      f.method = r.value("method", "*");
      f.path = r.value("path", "");
      f.body = r.value("body", "");
      f.rate_429 = r.value("rate429", 0.0);
      f.rate_500 = r.value("rate500", 0.0);
      f.rate_503 = r.value("rate503", 0.0);
      f.rate_quota = r.value("rateQuota", 0.0);
      f.rate_drop = r.value("rateDrop", 0.0);
      f.rate_slow = r.value("rateSlow", 0.0);
      f.slow_ms = r.value("slowMs", 0);
      f.rate_op_failure = r.value("rateOpFailure", 0.0);
      c.rules.push_back(f);
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("faults: ") + e.what());
  }
  return c;
}

json FaultConfigToJson(const FaultConfig& c) {
  json rules = json::array();
  for (const auto& f : c.rules) {
    rules.push_back({{"method", f.method}, {"path", f.path}, {"body", f.body}, {"rate429", f.rate_429},
                     {"rate500", f.rate_500}, {"rate503", f.rate_503}, {"rateQuota", f.rate_quota},
                     {"rateDrop", f.rate_drop}, {"rateSlow", f.rate_slow}, {"slowMs", f.slow_ms},
                     {"rateOpFailure", f.rate_op_failure}});
  }
  return {{"seed", c.seed}, {"rules", rules}};
}

Status FaultInjector::Configure(const FaultConfig& config) {
  std::vector<std::regex> patterns, body_patterns;
  for (const auto& r : config.rules) {
    for (auto [text, out, what] : {std::tuple{&r.path, &patterns, "path"},
                                   std::tuple{&r.body, &body_patterns, "body"}}) {
      try {
        out->emplace_back(*text, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return Status::InvalidArgument(std::string("faults: bad ") + what + " regex \"" + *text +
                                       "\": " + e.what());
      }
    }
  }
  config_ = config;
  patterns_ = std::move(patterns);
  body_patterns_ = std::move(body_patterns);
  rng_.seed(config.seed);
  return Status::OK();
}

FaultDecision FaultInjector::Decide(const std::string& method, const std::string& path,
                                    const std::string& body) {
  FaultDecision d;
  for (size_t i = 0; i < config_.rules.size(); ++i) {
    const FaultRule& r = config_.rules[i];
    if (r.method != "*" && r.method != method) continue;
    if (!r.path.empty() && !std::regex_search(path, patterns_[i])) continue;
    if (!r.body.empty() && !std::regex_search(body, body_patterns_[i])) continue;
    // Three draws per matching request, always, so one rate never shifts
    // the sequence another rate sees.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double fault = u(rng_), slow = u(rng_), op = u(rng_);
    double edge = 0;
    const std::pair<double, FaultKind> kinds[] = {{r.rate_429, FaultKind::k429},
                                                  {r.rate_500, FaultKind::k500},
                                                  {r.rate_503, FaultKind::k503},
                                                  {r.rate_quota, FaultKind::kQuota},
                                                  {r.rate_drop, FaultKind::kDrop}};
    for (const auto& [rate, kind] : kinds) {
      edge += rate;
      if (fault < edge) {
        d.kind = kind;
        break;
      }
    }
    if (slow < r.rate_slow) d.delay_ms = r.slow_ms;
    d.fail_operation = op < r.rate_op_failure;
    break;
  }
  return d;
}

}  // namespace tpu::sim
