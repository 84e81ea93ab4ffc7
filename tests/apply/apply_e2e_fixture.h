// Shared by the apply end-to-end tests: the real `tpu-provisioner` binary
// against a cloud emulator that lives in the test process, so it outlives
// every apply (including ones killed with SIGKILL) as the real cloud would.
// Helpers write manifests, run or kill the binary, and read what the emulator
// holds, counted and recorded (one JSON line per API exchange).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "metadata_server.h"
#include "sim/cloud_emulator.h"

namespace tpu::apply::testing {

namespace fs = std::filesystem;
using nlohmann::json;

inline std::string Pool(const std::string& name, const std::string& topology, int slices,
                        const std::string& zone = "us-east5-b", const std::string& extra = "") {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " + name +
         "\nspec:\n  accelerator: v6e\n  topology: " + topology + "\n  slices: " +
         std::to_string(slices) + "\n  location: " + zone + "\n" + extra;
}

inline std::string ClusterYaml(const std::string& cluster, const std::string& extra = "") {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + cluster +
         "\nspec:\n  location: us-east5\n" + extra;
}

class ApplyE2EBase : public ::testing::Test {
 protected:
  static constexpr const char* kProject = "proj-apply";
  static constexpr const char* kApplyArgs =
      "--auto-approve --poll-initial-ms 20 --poll-max-ms 100 --parallelism 16";
  static constexpr const char* kCreateRoute =
      "POST /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools";
  static constexpr const char* kDeleteRoute =
      "DELETE /v1/projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{nodePool}";

  void SetUp() override {
    char tmpl[] = "/tmp/apply-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    repo_ = dir_ + "/repo";
    record_ = dir_ + "/record.jsonl";
  }
  void TearDown() override {
    if (emu_) emu_->Stop();
    fs::remove_all(dir_);
  }

  // An emulator with operations taking `op_ms`, recording every exchange,
  // with GKE's concurrent-operations quota `quota` per cluster.
  void StartEmulator(int op_ms = 60, sim::FaultConfig faults = {}, int quota = 5) {
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", op_ms}};
    o.faults = std::move(faults);
    o.concurrent_operations_quota = quota;
    o.record_file = record_;
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
  }

  // A GKE cluster in the emulator and its directory in the repo.
  void AddCluster(const std::string& cluster, const std::string& cluster_spec = "") {
    ASSERT_TRUE(emu_->EnsureCluster(kProject, "us-east5", cluster).ok());
    Write("deploy/" + std::string(kProject) + "/" + cluster + "/cluster.yaml", ClusterYaml(cluster, cluster_spec));
  }

  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(repo_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void Remove(const std::string& rel) { fs::remove(fs::path(repo_) / rel); }

  std::string Command(const std::string& verb, const std::string& args) const {
    return "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=" + dir_ + " GCE_METADATA_HOST=" +
           metadata_.host() + " " + TPU_BINARY + " " + verb + " --repo " + repo_ +
           " --gke-endpoint " + emu_->endpoint() + "/ --compute-endpoint " + emu_->endpoint() +
           "/ " + args;
  }

  // Runs to completion; returns the exit code, output in `out`.
  int Run(const std::string& verb, const std::string& args, std::string* out = nullptr) {
    std::string cmd = Command(verb, args) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    int status = pclose(p);
    if (out) *out = text;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Starts `apply args` and SIGKILLs it as soon as `kill_when()` holds (polled
  // every few ms), or after `max` when it never does. False if the apply ended first.
  bool RunAndKillWhen(const std::string& args, const std::function<bool()>& kill_when,
                      std::chrono::milliseconds max = std::chrono::seconds(60)) {
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      std::string cmd = "exec " + Command("apply", args) + " >/dev/null 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + max;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline && !kill_when()) {
      if (waitpid(pid, &status, WNOHANG) == pid) return false;  // finished before the kill
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return true;
  }
  // Starts apply and SIGKILLs it after `ms` milliseconds (or when it ends).
  void RunAndKill(int ms, const std::string& args = kApplyArgs) {
    auto at = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    RunAndKillWhen(args, [at] { return std::chrono::steady_clock::now() >= at; });
  }

  // Node pools by "cluster/name" → status, from the emulator over its API.
  std::map<std::string, std::string> LivePools() {
    std::map<std::string, std::string> out;
    for (const auto& [key, pool] : LivePoolBodies()) out[key] = pool.value("status", "");
    return out;
  }
  std::map<std::string, json> LivePoolBodies(const std::string& project = kProject) {
    httplib::Client client("127.0.0.1", emu_->port());
    httplib::Headers auth = {{"Authorization", "Bearer t"}};
    auto r = client.Get("/v1/projects/" + project + "/locations/-/clusters", auth);
    std::map<std::string, json> out;
    if (!r || r->status != 200) return out;
    json j = json::parse(r->body);
    for (const auto& c : j.value("clusters", json::array()))
      for (const auto& p : c.value("nodePools", json::array()))
        out[c["name"].get<std::string>() + "/" + p["name"].get<std::string>()] = p;
    return out;
  }

  int64_t Route(const std::string& route) {
    auto counters = emu_->counters();
    auto it = counters.calls_by_route.find(route);
    return it == counters.calls_by_route.end() ? 0 : it->second;
  }

  // Every recorded exchange, in order.
  std::vector<json> Recorded() const {
    std::vector<json> out;
    std::ifstream in(record_);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(json::parse(line));
    return out;
  }

  // Node pool creates the emulator accepted (200), by "cluster/name": a pool
  // created twice would count 2 (the second after a delete).
  std::map<std::string, int> AcceptedPoolCreates() const {
    std::map<std::string, int> out;
    for (const auto& x : Recorded()) {
      const std::string path = x.value("path", "");
      if (x.value("method", "") != "POST" || x.value("status", 0) != 200 || !path.ends_with("/nodePools"))
        continue;
      size_t c = path.find("/clusters/") + 10;
      std::string cluster = path.substr(c, path.find('/', c) - c);
      out[cluster + "/" + x["request"]["nodePool"].value("name", "")]++;
    }
    return out;
  }

  tpu::test_support::MetadataServer metadata_;
  std::string dir_, repo_, record_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

}  // namespace tpu::apply::testing
