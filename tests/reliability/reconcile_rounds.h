// One reconcile round in this process — load the repo from disk, refresh
// (with the operations earlier rounds left), plan, execute — with the real
// libcurl transport to the emulator, wrapped to count every attempt of every
// mutating call. The fault matrix uses it instead of the binary because its
// retry backoff can be shortened here (the binary's starts at 1 s), so dozens
// of faulty runs fit in seconds while the budget logic (apply/step_task.h:
// RetryBudget) is exactly the one the binary runs.
#pragma once

#include <mutex>

#include <openssl/sha.h>

#include "apply/executor.h"
#include "base/fake_env.h"
#include "cloud/cloud.h"
#include "cloud/endpoints.h"
#include "http/curl_transport.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/planner.h"
#include "reliability/reliability_env.h"

namespace tpu::reliability {

// Forwards to http::CurlTransport, counting attempts per mutating call. A call is
// its method, URL and body: a retry re-sends exactly those.
class CountingTransport : public http::HttpTransport {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    if (request.method != "GET" && request.url.find("/wait") == std::string::npos) {
      std::lock_guard<std::mutex> lock(mu_);
      attempts_[request.method + " " + request.url + " " + Digest(request.body)]++;
    }
    return inner_.Send(request);
  }
  std::map<std::string, int> TakeAttempts() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(attempts_, {});
  }

 private:
  static std::string Digest(const std::string& body) {
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(body.data()), body.size(), d);
    return std::to_string(d[0]) + "." + std::to_string(d[1]) + "." + std::to_string(d[2]);
  }
  http::CurlTransport inner_;
  std::mutex mu_;
  std::map<std::string, int> attempts_;
};

struct Round {
  Status refresh;             // a failed refresh ends the round before planning
  bool had_changes = false;   // what the round's plan found
  apply::ApplyReport report;  // empty when there was nothing to do
  std::map<std::string, int> attempts;  // per mutating call
};

class InProcessReconciler {
 public:
  InProcessReconciler(const fs::path& repo, const std::string& endpoint) : repo_(repo) {
    auto transport = std::make_unique<CountingTransport>();
    transport_ = transport.get();
    cloud::Endpoints endpoints;
    auto resolved = cloud::ResolveEndpoints(
        {endpoint + "/", endpoint + "/"}, FakeEnv());
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    if (resolved.ok()) endpoints = *resolved;
    connection_ = std::make_unique<cloud::CloudConnection>(
        std::move(transport), std::make_unique<cloud::StaticTokenProvider>("reliability-token"), endpoints);
  }

  // Fast backoff, the real budget (12 retries per call).
  static apply::ExecuteOptions Options() {
    apply::ExecuteOptions o;
    o.steps.poll.initial = std::chrono::milliseconds(5);
    o.steps.poll.max = std::chrono::milliseconds(20);
    o.steps.retry.base = std::chrono::milliseconds(2);
    o.steps.retry.cap = std::chrono::milliseconds(20);
    return o;
  }

  Round Run(bool execute = true) {
    Round r;
    auto tree = manifest::DiskTree::Open(repo_.string());
    EXPECT_TRUE(tree.ok()) << tree.status().ToString();
    if (!tree.ok()) return r;
    manifest::Repo repo = manifest::LoadRepo(**tree);
    plan::PlanOptions po;
    po.allow_mass_delete = true;
    cloud::RefreshOptions ro;
    ro.include_operations = true;
    auto live = connection_->Refresh(plan::ProjectsToRefresh(repo, po), ro);
    if (!live.ok()) {
      r.refresh = live.status();
      r.attempts = transport_->TakeAttempts();
      return r;
    }
    plan::Plan plan = plan::ComputePlan(repo, *live, po);
    r.had_changes = plan.HasChanges();
    apply::ExecuteOptions eo = Options();
    for (const auto& [project, state] : live->projects)
      eo.running_operations.insert(eo.running_operations.end(), state.running_operations.begin(),
                                   state.running_operations.end());
    if (execute && (r.had_changes || !eo.running_operations.empty())) {
      apply::Executor executor({&connection_->gke(), &connection_->compute(), &connection_->poller()}, eo);
      r.report = executor.Run(plan);
    }
    r.attempts = transport_->TakeAttempts();
    return r;
  }

  cloud::CloudConnection& connection() { return *connection_; }

 private:
  fs::path repo_;
  CountingTransport* transport_ = nullptr;
  std::unique_ptr<cloud::CloudConnection> connection_;
};

}  // namespace tpu::reliability
