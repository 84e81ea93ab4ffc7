// The fixture of the plan end-to-end tests: the real `tpu-provisioner plan`
// binary against the cloud emulator (GKE + Compute over loopback HTTP), seeded
// with live state built from the same manifests through the wire, with
// credentials from a local metadata server.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cloud/compute_wire.h"
#include "cloud/gke_wire.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"
#include "plan/desired.h"
#include "plan/plan_json.h"
#include "metadata_server.h"
#include "sim/cloud_emulator.h"

namespace tpu::plan::e2e {

namespace fs = std::filesystem;
using nlohmann::json;

using tpu::test_support::MetadataServer;

struct BinaryRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline constexpr const char* kV5p = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: train
spec:
  accelerator: v5p
  topology: 2x2x4
  slices: 4
  location: us-central2-b
  nodeConfig:
    labels:
      team: research
      tier: a
    taints:
      - key: dedicated
        value: train
        effect: NoSchedule
      - key: after
        value: x
        effect: NoExecute
    oauthScopes: [cloud-platform, userinfo.email]
    diskType: pd-balanced
)";

inline constexpr const char* kV6e = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: TPUNodePool
metadata:
  name: serve
spec:
  accelerator: tpu-v6e-slice
  topology: 2x2
  nodeCount: 2
  location: us-central2-b
  capacity:
    type: spot
)";

inline constexpr const char* kCluster = R"(apiVersion: tpu-provisioner.io/v1alpha1
kind: Cluster
metadata:
  name: c
spec:
  location: us-central2
  maxDeletePercent: 50
)";

class PlanE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/plan-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    repo_ = dir_ + "/repo";
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 0}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster("proj-e2e", "us-central2", "c").ok());
    Write("deploy/proj-e2e/c/cluster.yaml", kCluster);
    Write("deploy/proj-e2e/c/train.yaml", kV5p);
    Write("deploy/proj-e2e/c/serve.yaml", kV6e);
  }
  void TearDown() override {
    emu_->Stop();
    fs::remove_all(dir_);
  }

  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(repo_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  // Creates in the emulator, through its GKE create route, every node pool
  // the repo currently declares, as tpu-provisioner would have; `edit` may
  // change a pool before it is created (and return false to skip it).
  void SeedFromRepo(const std::function<bool(cloud::NodePool&)>& edit = nullptr) {
    auto tree = manifest::DiskTree::Open(repo_);
    ASSERT_TRUE(tree.ok());
    manifest::Repo repo = manifest::LoadRepo(**tree);
    ASSERT_TRUE(repo.AllErrors().empty()) << repo.AllErrors()[0].ToString();
    json pools = json::array();
    httplib::Client client("127.0.0.1", emu_->port());
    httplib::Headers auth = {{"Authorization", "Bearer seed"}};
    auto insert = [&](const std::string& path, const json& body) {
      auto r = client.Post(("/compute/v1/projects/proj-e2e/" + path).c_str(), auth, body.dump(), "application/json");
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << path << ": " << r->body;
    };
    for (const auto& t : repo.targets) {
      DesiredTarget d = BuildDesired(t);
      // Compute objects first: a tpu7x pool's create checks its workload policy.
      for (const auto& wp : d.policies)
        insert("regions/" + wp.resource.region + "/resourcePolicies", cloud::WorkloadPolicyToJson(wp.resource));
      for (const auto& it : d.templates)
        insert("global/instanceTemplates", cloud::InstanceTemplateToJson(it.resource));
      for (const auto& g : d.groups)
        insert("zones/" + g.resource.zone + "/instanceGroupManagers",
               cloud::InstanceGroupManagerToJson(g.resource));
      for (auto& dp : d.pools) {
        if (edit && !edit(dp.pool)) continue;
        pools.push_back({{"project", t.project},
                         {"location", "us-central2"},
                         {"cluster", t.cluster},
                         {"nodePool", cloud::CreateNodePoolBody(dp.pool)["nodePool"]}});
      }
    }
    auto r = client.Post("/sim/seed", json{{"nodePools", pools}}.dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    emu_->ResetCounters();
  }

  BinaryRun RunPlan(const std::string& args) {
    emu_->ResetCounters();  // each run is checked on its own
    std::string err_file = dir_ + "/stderr";
    std::string cmd = "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=" + dir_ + " GCE_METADATA_HOST=" +
                      metadata_.host() + " " + TPU_BINARY + " plan --repo " + repo_ + " --gke-endpoint " +
                      emu_->endpoint() + "/ --compute-endpoint " + emu_->endpoint() + "/ " + args + " 2>" +
                      err_file;
    BinaryRun run;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return run;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) run.out.append(buf, n);
    int status = pclose(p);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err_file);
    run.err.assign(std::istreambuf_iterator<char>(in), {});
    return run;
  }

  json PlanJson(const std::string& args, int want_exit) {
    BinaryRun r = RunPlan("-o json --detailed-exitcode " + args);
    EXPECT_EQ(r.exit_code, want_exit) << r.err << r.out;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }

  // "action name" for every non-noop action of target `key`.
  static std::vector<std::string> Steps(const json& plan, const std::string& key) {
    std::vector<std::string> out;
    for (const auto& t : plan["targets"])
      if (t["key"] == key)
        for (const auto& a : t["actions"])
          if (a["action"] != "noop")
            out.push_back(a["action"].get<std::string>() + " " + a["resource"]["name"].get<std::string>());
    return out;
  }
  static const json& Target(const json& plan, const std::string& key) {
    for (const auto& t : plan["targets"])
      if (t["key"] == key) return t;
    static const json none;
    return none;
  }

  // 4 calls per project, and a 5th (its reservations) when a manifest names a reservation.
  void ExpectReadOnly(int projects = 1) {
    sim::CloudCounters c = emu_->counters();
    EXPECT_EQ(c.mutating_calls, 0) << c.ToJson().dump();
    const std::string reservations = "GET /compute/v1/projects/{project}/aggregated/reservations";
    const int64_t listed = c.calls_by_route.count(reservations) ? c.calls_by_route.at(reservations) : 0;
    EXPECT_LE(listed, projects) << c.ToJson().dump();
    EXPECT_LE(c.calls - listed, 4 * projects) << c.ToJson().dump();
    EXPECT_GE(c.calls, 1);
  }

  std::string dir_, repo_;
  MetadataServer metadata_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

}  // namespace tpu::plan::e2e
