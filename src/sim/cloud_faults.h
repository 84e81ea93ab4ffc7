// Seeded, reproducible fault injection. Rules match a request by method and
// regular expressions searched in its path and body; the first matching rule decides,
// from one draw of a generator seeded with `seed`, whether the request fails
// with 429, 500, 503 or a quota 403, has its connection dropped, is slowed
// down, or starts an operation that will fail. The same seed and the same
// sequence of requests give the same faults. Not thread-safe: guarded by the
// emulator's lock.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "base/status.h"
#include "sim/sim_http.h"

namespace tpu::sim {

struct FaultRule {
  std::string method = "*";     // GET, POST, … or "*"
  std::string path = "";        // ECMAScript regex searched in the path; "" matches all
  std::string body = "";        // ECMAScript regex searched in the raw request body; "" matches all
                                // (e.g. one node pool's create: "\"name\":\"train-0\"")
  double rate_429 = 0;
  double rate_500 = 0;
  double rate_503 = 0;
  double rate_quota = 0;        // 403 "Insufficient regional quota"
  double rate_drop = 0;         // the connection closes before a full response
  double rate_slow = 0;
  int slow_ms = 0;
  double rate_op_failure = 0;   // the operation the request starts ends with an error
};

struct FaultConfig {
  uint64_t seed = 1;
  std::vector<FaultRule> rules;
};

// {"seed":N,"rules":[{"method","path","body","rate429","rate500","rate503","rateQuota",
//                     "rateDrop","rateSlow","slowMs","rateOpFailure"}]}
Result<FaultConfig> FaultConfigFromJson(const json& j);
json FaultConfigToJson(const FaultConfig& c);

enum class FaultKind { kNone, k429, k500, k503, kQuota, kDrop };

struct FaultDecision {
  FaultKind kind = FaultKind::kNone;
  int delay_ms = 0;
  bool fail_operation = false;
};

class FaultInjector {
 public:
  // Replaces the rules and restarts the generator from the config's seed.
  Status Configure(const FaultConfig& config);
  const FaultConfig& config() const { return config_; }
  FaultDecision Decide(const std::string& method, const std::string& path,
                       const std::string& body = "");

 private:
  FaultConfig config_;
  std::vector<std::regex> patterns_;
  std::vector<std::regex> body_patterns_;
  std::mt19937_64 rng_{1};
};

}  // namespace tpu::sim
