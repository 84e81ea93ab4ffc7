// The cloud emulator as its own process (`tpu-provisioner sim`), so the
// figures of the process under test never include the emulator's work. Knows
// the control endpoints the scenarios need: reset counters, read call counts.
#pragma once

#include <memory>
#include <string>

#include "bench/process.h"
#include <nlohmann/json.hpp>

namespace tpu::bench {

using json = nlohmann::json;

struct SimSpec {
  std::string binary;          // tpu-provisioner
  std::string state_file;      // "" = memory only
  std::string config_file;     // written by Start from the fields below
  int request_latency_ms = 0;
  int op_latency_ms = 200;     // every operation type
  json clusters = json::array();  // [{"project","location","name"}] created at start
};

class SimProcess {
 public:
  static Result<std::unique_ptr<SimProcess>> Start(const SimSpec& spec);
  ~SimProcess();
  const std::string& endpoint() const { return endpoint_; }  // "http://127.0.0.1:PORT/"
  Status ResetCounters();
  // Total API calls since the last reset (control endpoints not counted).
  Result<int64_t> Calls();

 private:
  SimProcess() = default;
  std::unique_ptr<Child> child_;
  std::string endpoint_;
  int port_ = 0;
};

}  // namespace tpu::bench
