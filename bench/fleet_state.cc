// Emulator state matching a fleet repo (see fleet_state.h).
#include "bench/fleet_state.h"

#include <algorithm>

#include <httplib.h>

#include "cloud/cloud.h"
#include "cloud/gke_wire.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/planner.h"
#include "sim/cloud_emulator.h"
#include "sim/state_file.h"

namespace tpu::bench {
namespace {

constexpr size_t kSeedBatch = 500;  // pools per POST /sim/seed

Result<plan::Plan> PlanAgainst(const manifest::Repo& repo, cloud::CloudConnection& conn) {
  plan::PlanOptions po;
  auto live = conn.Refresh(plan::ProjectsToRefresh(repo, po));
  if (!live.ok()) return live.status();
  return plan::ComputePlan(repo, *live, po);
}

Status Seed(httplib::Client& http, const nlohmann::json& pools) {
  nlohmann::json body = {{"nodePools", pools}};
  auto res = http.Post("/sim/seed", body.dump(), "application/json");
  if (!res) return Status::Unavailable("POST /sim/seed: " + httplib::to_string(res.error()));
  if (res->status != 200) return Status::Internal("POST /sim/seed: " + res->body);
  return Status::OK();
}

int ComputeOrder(plan::ResourceKind k) {
  switch (k) {
    case plan::ResourceKind::kWorkloadPolicy: return 0;
    case plan::ResourceKind::kInstanceTemplate: return 1;
    default: return 2;
  }
}

}  // namespace

Result<FleetStateSummary> WriteFleetState(const std::string& repo_path, const std::string& state_file) {
  auto tree = manifest::DiskTree::Open(repo_path);
  if (!tree.ok()) return tree.status();
  manifest::Repo repo = manifest::LoadRepo(**tree);
  if (auto errors = repo.AllErrors(); !errors.empty())
    return Status::InvalidArgument("fleet repo has " + std::to_string(errors.size()) +
                                   " manifest errors, the first: " + errors.front().ToString());

  sim::CloudEmulatorOptions o;
  o.op_latency_ms = {{"default", 0}};
  sim::CloudEmulator emu(o);
  if (Status s = emu.Start(); !s.ok()) return s;
  FleetStateSummary sum;
  for (const auto& t : repo.targets) {
    if (!t.policy.location) return Status::InvalidArgument(t.Key() + ": no cluster location");
    if (Status s = emu.EnsureCluster(t.project, *t.policy.location, t.cluster); !s.ok()) return s;
    ++sum.clusters;
  }
  cloud::CloudOptions co;
  co.endpoints.container = emu.endpoint() + "/";
  co.endpoints.compute = emu.endpoint() + "/";
  co.access_token = "bench";
  auto opened = cloud::CloudConnection::Open(co);
  if (!opened.ok()) return opened.status();
  // Closed before the emulator stops: it waits for idle keep-alive connections.
  std::unique_ptr<cloud::CloudConnection> conn = std::move(opened.value());

  auto first = PlanAgainst(repo, *conn);
  if (!first.ok()) return first.status();
  auto http_client = std::make_unique<httplib::Client>("127.0.0.1", emu.port());
  httplib::Client& http = *http_client;
  http.set_read_timeout(600, 0);
  // Compute objects first: every emulator request walks the operations list,
  // so they go in while it is short, then the node pools in a few batches.
  std::vector<const plan::Action*> compute, pools;
  for (const auto& t : first->targets)
    for (const auto& a : t.actions) {
      if (a.kind != plan::ActionKind::kCreate) continue;
      (a.resource.kind == plan::ResourceKind::kNodePool ? pools : compute).push_back(&a);
    }
  std::stable_sort(compute.begin(), compute.end(), [](const plan::Action* x, const plan::Action* y) {
    return ComputeOrder(x->resource.kind) < ComputeOrder(y->resource.kind);
  });
  auto& cc = conn->compute();
  for (const plan::Action* a : compute) {
    const std::string& p = a->resource.project;
    cloud::ApiResult<cloud::Operation> op = cloud::ApiResult<cloud::Operation>(cloud::Operation{});
    if (a->workload_policy) op = cc.InsertWorkloadPolicy(p, *a->workload_policy);
    else if (a->instance_template) op = cc.InsertInstanceTemplate(p, *a->instance_template);
    else if (a->instance_group_manager) op = cc.InsertInstanceGroupManager(p, *a->instance_group_manager);
    if (!op.ok()) return Status::Internal("insert " + a->resource.Id() + ": " + op.status().ToString());
    ++sum.compute_objects;
  }
  nlohmann::json batch = nlohmann::json::array();
  for (const plan::Action* a : pools) {
    batch.push_back({{"project", a->resource.project}, {"location", a->resource.location},
                     {"cluster", a->resource.cluster}, {"nodePool", cloud::NodePoolToJson(*a->node_pool)}});
    ++sum.node_pools;
    if (batch.size() == kSeedBatch) {
      if (Status s = Seed(http, batch); !s.ok()) return s;
      batch = nlohmann::json::array();
    }
  }
  if (!batch.empty())
    if (Status s = Seed(http, batch); !s.ok()) return s;

  auto second = PlanAgainst(repo, *conn);
  if (!second.ok()) return second.status();
  for (const auto& t : second->targets)
    for (const auto& a : t.actions)
      if (a.changes_something()) ++sum.changes_left;
  http_client.reset();
  conn.reset();
  if (Status s = sim::WriteStateFile(state_file, emu.StateSnapshot()); !s.ok()) return s;
  emu.Stop();
  return sum;
}

}  // namespace tpu::bench
