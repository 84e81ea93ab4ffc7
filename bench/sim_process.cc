// The emulator in its own process (see sim_process.h).
#include "bench/sim_process.h"

#include <signal.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <regex>

#include <httplib.h>

namespace tpu::bench {

Result<std::unique_ptr<SimProcess>> SimProcess::Start(const SimSpec& spec) {
  json config = {{"opLatencyMs", {{"default", spec.op_latency_ms}}},
                 {"requestLatencyMs", spec.request_latency_ms},
                 {"clusters", spec.clusters}};
  {
    std::ofstream out(spec.config_file);
    out << config.dump(1);
    if (!out) return Status::IoError(spec.config_file + ": cannot write");
  }
  std::unique_ptr<SimProcess> sim(new SimProcess());
  ProcessSpec ps;
  ps.argv = {spec.binary, "sim", "--listen", "127.0.0.1:0", "--config", spec.config_file};
  if (!spec.state_file.empty()) {
    ps.argv.push_back("--state");
    ps.argv.push_back(spec.state_file);
  }
  ps.stream_output = true;
  auto mu = std::make_shared<std::mutex>();
  auto cv = std::make_shared<std::condition_variable>();
  auto port = std::make_shared<int>(0);
  auto last = std::make_shared<std::string>();
  auto child = Child::Start(ps, [mu, cv, port, last](const std::string& line, Clock::time_point) {
    static const std::regex re(R"(listening on http://127\.0\.0\.1:(\d+))");
    std::smatch m;
    std::lock_guard<std::mutex> l(*mu);
    *last = line;
    if (std::regex_search(line, m, re)) {
      *port = std::stoi(m[1]);
      cv->notify_all();
    }
  });
  if (!child.ok()) return child.status();
  sim->child_ = std::move(child.value());
  {
    // A large state file takes a while to load; the deadline is only for a hung start.
    std::unique_lock<std::mutex> l(*mu);
    if (!cv->wait_for(l, std::chrono::minutes(5), [&] { return *port != 0; }))
      return Status::Unavailable("emulator did not start: " + *last);
  }
  sim->port_ = *port;
  sim->endpoint_ = "http://127.0.0.1:" + std::to_string(*port) + "/";
  return sim;
}

SimProcess::~SimProcess() {
  if (child_) {
    child_->Signal(SIGTERM);
    child_->Wait();
  }
}

Status SimProcess::ResetCounters() {
  httplib::Client http("127.0.0.1", port_);
  auto res = http.Post("/sim/reset", "{}", "application/json");
  if (!res || res->status != 200) return Status::Unavailable("POST /sim/reset failed");
  return Status::OK();
}

Result<int64_t> SimProcess::Calls() {
  httplib::Client http("127.0.0.1", port_);
  auto res = http.Get("/sim/counters");
  if (!res || res->status != 200) return Status::Unavailable("GET /sim/counters failed");
  json j = json::parse(res->body, nullptr, false);
  if (j.is_discarded() || !j.contains("calls")) return Status::Internal("bad /sim/counters body");
  return j["calls"].get<int64_t>();
}

}  // namespace tpu::bench
