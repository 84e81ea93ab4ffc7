// End-to-end tests of TPUNodeGroup nodes (issue 18, "Must show"): the real
// binary, a real git repository, both emulators, and a fake VM agent that
// plays the startup script. The group's VMs get a bootstrap token on their
// metadata once RUNNING, register their Nodes with it, get labelled; the
// tokens are then gone from the metadata and from Kubernetes; deleting the
// group's file cordons and removes its Nodes, and no other group's. No token is ever in a log,
// /status or /metrics, and a kill -9 mid-join leaves one token per VM.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "daemon/fake_vm_agent.h"
#include "daemon/kube_e2e_fixture.h"
#include "kube/resource.h"
#include "nodes/cluster_ca.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace res = kube::resources;

constexpr const char* kGroupZone = "us-central1-c";
constexpr const char* kControlPlane = "10.128.0.2:6443";

std::string GroupYaml(const std::string& name) {
  return R"(apiVersion: tpu.google.com/v1alpha1
kind: TPUNodeGroup
metadata:
  name: )" + name + R"(
spec:
  project: )" + kProject + R"(
  nodeLocation: us-central1-c
  nodeCount: 2
  topology: 2x2x2
  targetSizePolicyMode: "BULK"
  instanceConfig:
    machineType: tpu7x-standard-4t
    provisioningModel: "RESERVATION_BOUND"
    reservation: my-tpu-reservation
    image: projects/ubuntu-os-accelerator-images/global/images/tpu
  bootstrapKubernetes:
    version: "1.31"
    controlPlaneIP: 10.128.0.2
)";
}

std::string GceClusterYaml() {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: gce\nspec:\n"
         "  location: us-central1-c\n";
}

class NodeJoinE2eTest : public KubeE2eFixture {
 protected:
  void SetUp() override {
    KubeE2eFixture::SetUp();
    auto cm = client_->Create(res::kConfigMaps, "kube-public", nodes::testing::ClusterInfoConfigMap());
    ASSERT_TRUE(cm.ok()) << cm.status().ToString();
    WriteFile(repo_ / "deploy" / kProject / "gce/cluster.yaml", GceClusterYaml());
    WriteFile(repo_ / "deploy" / kProject / "gce/serve.yaml", GroupYaml("serve"));
    WriteFile(repo_ / "deploy" / kProject / "gce/keep.yaml", GroupYaml("keep"));
    CommitAll(repo_, "two TPUNodeGroups that join");
    agent_ = std::make_unique<FakeVmAgent>(cloud_.connection().compute(), api_.port(), kProject, kGroupZone,
                                           std::vector<std::string>{"serve", "keep"},
                                           FakeVmAgent::Expect{nodes::testing::kTestCaHash, kControlPlane});
  }
  void TearDown() override {
    if (agent_) agent_->Stop();
  }

  // A fixed port: at warn and above the log has no "listening on" line to read it from.
  std::unique_ptr<DaemonProcess> StartJoin(const std::string& log = "daemon.log",
                                           std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"--node-join-interval", "100ms", "--poll-interval", "1s", "--listen",
                                     "127.0.0.1:" + std::to_string(FreePort())};
    args.insert(args.end(), more.begin(), more.end());
    return Start(args, log);
  }

  static int FreePort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
  }

  std::vector<json> Items(const kube::ResourceRef& ref, const std::string& ns, const std::string& selector = "") {
    kube::ListOptions options;
    options.label_selector = selector;
    auto list = client_->List(ref, ns, options);
    return list.ok() ? list->items : std::vector<json>{};
  }
  std::vector<json> TokenSecrets() { return Items(res::kSecrets, "kube-system", "tpu-provisioner.dev/node-group"); }
  std::vector<json> Nodes(const std::string& group) {
    return Items(res::kNodes, "", "cloud.google.com/tpu-node-group=" + group);
  }

  // The join keys the VMs of both groups still carry.
  int JoinKeysLeft() {
    int n = 0;
    for (const char* mig : {"serve", "keep"}) {
      auto vms = cloud_.connection().compute().ListManagedInstances(kProject, kGroupZone, mig);
      if (!vms.ok()) return -1;
      for (const auto& vm : *vms) {
        auto instance = cloud_.connection().compute().GetInstance(kProject, kGroupZone, vm.name);
        if (!instance.ok()) continue;
        for (const auto& [k, v] : instance->metadata) n += k.rfind("kubeadm-", 0) == 0;
      }
    }
    return n;
  }

  static json Group(DaemonProcess& d, const std::string& name) {
    json s = d.Status();
    if (!s.is_object() || !s["nodeGroups"].is_object()) return nullptr;
    for (const auto& g : s["nodeGroups"]["groups"])
      if (g.value("name", "") == name) return g;
    return nullptr;
  }
  static bool Ready(DaemonProcess& d, const std::string& name) {
    json g = Group(d, name);
    return g.is_object() && g["ready"] == 2 && g["phase"] == "Ready";
  }

  // No token the VMs were handed appears in the log, /status or /metrics.
  void ExpectNoTokenLeaked(DaemonProcess& d) {
    const std::string status = d.Status().dump();
    auto metrics = d.Get("/metrics");
    const std::string text = d.Log() + status + (metrics ? metrics->body : "");
    for (const auto& [vm, tokens] : agent_->TokensSeen())
      for (const auto& t : tokens) {
        EXPECT_EQ(text.find(t.substr(7)), std::string::npos) << "the secret half of " << vm << "'s token leaked";
        EXPECT_EQ(text.find(t), std::string::npos);
      }
  }

  std::unique_ptr<FakeVmAgent> agent_;
};

class NodeJoinAtLogLevel : public NodeJoinE2eTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(NodeJoinAtLogLevel, VmsJoinAreLabelledTokensGoAndTeardownRemovesTheNodes) {
  setenv("SPDLOG_LEVEL", GetParam(), 1);
  agent_->Start();
  auto d = StartJoin();
  unsetenv("SPDLOG_LEVEL");
  ASSERT_NE(d->Port(), 0) << d->Log();

  // Each group's 2 VMs join and are Ready; /status says so.
  ASSERT_TRUE(WaitUntil([&] { return Ready(*d, "serve") && Ready(*d, "keep"); })) << d->Status().dump(2) << d->Log();
  json g = Group(*d, "serve");
  EXPECT_EQ(g["requested"], 2);
  EXPECT_EQ(g["instances"], 2);
  EXPECT_EQ(g["joined"], 2);
  EXPECT_TRUE(agent_->Problems().empty()) << agent_->Problems().front();
  EXPECT_EQ(agent_->Joined().size(), 4u);

  // They are labelled as GKE's TPU nodes are, and with their group.
  ASSERT_TRUE(WaitUntil([&] {
    auto nodes = Nodes("serve");
    if (nodes.size() != 2) return false;
    for (const auto& n : nodes) {
      const auto& l = n["metadata"].value("labels", json::object());
      if (l.value("cloud.google.com/gke-tpu-accelerator", "") != "tpu7x" ||
          l.value("cloud.google.com/gke-tpu-topology", "") != "2x2x2" ||
          l.value("cloud.google.com/gke-accelerator-count", "") != "4")
        return false;
    }
    return Nodes("keep").size() == 2;
  })) << d->Log();

  // The Secrets are gone, and so are the join keys on the VMs.
  ASSERT_TRUE(WaitUntil([&] { return TokenSecrets().empty() && JoinKeysLeft() == 0; }))
      << TokenSecrets().size() << " secrets, " << JoinKeysLeft() << " keys left";
  EXPECT_EQ(agent_->TokensSeen().size(), 4u);
  for (const auto& [vm, tokens] : agent_->TokensSeen()) EXPECT_EQ(tokens.size(), 1u) << vm;
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("tpu_provisioner_node_group_vms{group=\"serve\",stage=\"ready\"} 2"),
            std::string::npos);

  // Deleting one group's file: its Nodes cordoned, MIG → template → policy
  // deleted, then its Nodes; the other group's Nodes stay as they were.
  std::filesystem::remove(repo_ / "deploy" / kProject / "gce/serve.yaml");
  CommitAll(repo_, "one group goes");
  ASSERT_TRUE(WaitUntil([&] { return Nodes("serve").empty(); })) << d->Log();
  EXPECT_EQ(d->Status()["nodeGroups"]["nodesCordoned"], 2) << "cordoned before the MIG went";
  EXPECT_EQ(d->Status()["nodeGroups"]["nodesDeleted"], 2);
  auto live = cloud_.connection().Refresh({kProject});
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->projects[kProject].instance_group_managers.size(), 1u);
  EXPECT_EQ(live->projects[kProject].instance_group_managers[0].name, "keep");
  ASSERT_EQ(Nodes("keep").size(), 2u);
  for (const auto& n : Nodes("keep")) EXPECT_FALSE(n.value("spec", json::object()).value("unschedulable", false));
  ExpectNoTokenLeaked(*d);
}

INSTANTIATE_TEST_SUITE_P(EveryLevel, NodeJoinAtLogLevel, ::testing::Values("trace", "debug", "info", "warn", "error", "critical"));

TEST_F(NodeJoinE2eTest, AGroupWhoseMigCannotBeMadeIsFailedWithTheOperatorsReason) {
  sim::FaultRule broken;
  broken.method = "POST";
  broken.path = "instanceGroupManagers$";
  broken.body = "\"name\":\"serve\"";
  broken.rate_op_failure = 1.0;
  ASSERT_TRUE(cloud_.emulator().SetFaults({1, {broken}}).ok());
  agent_->Start();
  auto d = StartJoin();
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] {
    json g = Group(*d, "serve");
    return g.is_object() && g["phase"] == "Failed" && Ready(*d, "keep");
  })) << d->Status().dump(2);
  json g = Group(*d, "serve");
  EXPECT_EQ(g["reason"], "OperationFailed") << g.dump();
  EXPECT_NE(g["message"].get<std::string>().find("operation"), std::string::npos) << g.dump();
  auto metrics = d->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("tpu_provisioner_node_group_failed{group=\"serve\",reason=\"OperationFailed\"} 1"),
            std::string::npos);
}

TEST_F(NodeJoinE2eTest, RemovingTheLastJoiningGroupsStillTearsTheirNodesDown) {
  agent_->Start();
  auto d = StartJoin("daemon.log", {"--allow-mass-delete"});
  ASSERT_NE(d->Port(), 0) << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return Ready(*d, "serve") && Ready(*d, "keep"); })) << d->Status().dump(2);
  // No group is left that bootstraps Kubernetes: the join goes on over the
  // target it last served.
  std::filesystem::remove(repo_ / "deploy" / kProject / "gce/serve.yaml");
  std::filesystem::remove(repo_ / "deploy" / kProject / "gce/keep.yaml");
  CommitAll(repo_, "both groups go");
  ASSERT_TRUE(WaitUntil([&] { return Nodes("serve").empty() && Nodes("keep").empty(); })) << d->Log();
  EXPECT_EQ(d->Status()["nodeGroups"]["nodesCordoned"], 4);
  EXPECT_TRUE(TokenSecrets().empty());
  // The status follows git: no group is reported once none is declared.
  ASSERT_TRUE(WaitUntil([&] { return d->Status()["nodeGroups"]["groups"].empty(); })) << d->Status().dump(2);
  EXPECT_EQ(d->Status()["nodeGroups"]["target"], std::string(kProject) + "/gce");
}

TEST_F(NodeJoinE2eTest, KillDuringTheJoinLeavesOneTokenPerVmAndEveryVmJoins) {
  // The first daemon mints the tokens but cannot write the metadata: killed
  // then, it leaves Secrets no VM has seen.
  sim::FaultRule no_metadata;
  no_metadata.method = "POST";
  no_metadata.path = "setMetadata";
  no_metadata.rate_500 = 1.0;
  ASSERT_TRUE(cloud_.emulator().SetFaults({1, {no_metadata}}).ok());
  agent_->Start();
  auto first = StartJoin("first.log");
  ASSERT_NE(first->Port(), 0) << first->Log();
  ASSERT_TRUE(WaitUntil([&] { return TokenSecrets().size() == 4; })) << first->Log();
  first->Signal(SIGKILL);
  first->WaitExit();
  std::set<std::string> minted;
  for (const auto& s : TokenSecrets()) minted.insert(s["metadata"]["name"].get<std::string>());

  ASSERT_TRUE(cloud_.emulator().SetFaults({}).ok());
  auto second = StartJoin("second.log");
  ASSERT_NE(second->Port(), 0) << second->Log();
  ASSERT_TRUE(WaitUntil([&] { return agent_->Joined().size() == 4; })) << second->Log();
  ASSERT_TRUE(WaitUntil([&] { return TokenSecrets().empty(); }));
  // The restart used the Secrets it found: each VM was only ever handed one
  // token, and it was one the first daemon minted.
  for (const auto& [vm, tokens] : agent_->TokensSeen()) {
    ASSERT_EQ(tokens.size(), 1u) << vm;
    EXPECT_TRUE(minted.count("bootstrap-token-" + tokens.begin()->substr(0, 6))) << vm;
  }
  json counters = second->Status()["nodeGroups"];
  EXPECT_EQ(counters["tokensIssued"], 0) << counters.dump();
  ExpectNoTokenLeaked(*second);
}

}  // namespace
}  // namespace tpu::daemon
