// NodeJoiner against both emulators in this process, one pass at a time with
// a clock the test moves: tokens per RUNNING VM, their expiry, which Nodes are
// stale, and cordoning. The whole story through the real binary is
// tests/daemon/node_join_e2e_test.cc.
#include "nodes/node_joiner.h"

#include <gtest/gtest.h>

#include "cloud/emulator_fixture.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "nodes/bootstrap_token.h"
#include "nodes/cluster_ca.h"
#include "sim/kube/api_server.h"

namespace tpu::nodes {
namespace {

namespace res = kube::resources;
constexpr const char* kProject = "proj-c";
constexpr const char* kZone = "us-central1-a";

class NodeJoinerTest : public cloud::testing::EmulatorTest {
 protected:
  void SetUp() override {
    cloud::testing::EmulatorTest::SetUp();
    ASSERT_TRUE(api_.Start().ok());
    kube::RestConfig rc;
    rc.server = api_.url();
    kube_ = std::make_unique<kube::RestClient>(rc);
    ASSERT_TRUE(kube_->Create(res::kConfigMaps, "kube-public", testing::ClusterInfoConfigMap()).ok());
    joiner_ = std::make_unique<NodeJoiner>(*kube_, compute(), [this] { return now_; });
  }

  // A group `name` of `size` RUNNING VMs.
  JoinGroup MakeGroup(const std::string& name, int size) {
    cloud::InstanceTemplate t;
    t.name = name + "-tmpl";
    t.machine_type = "tpu7x-standard-4t";
    auto top = compute().InsertInstanceTemplate(kProject, t);
    EXPECT_TRUE(top.ok()) << top.status().ToString();
    if (top.ok()) AwaitDone(*top);
    cloud::InstanceGroupManager m;
    m.name = name;
    m.zone = kZone;
    m.instance_template = "projects/proj-c/global/instanceTemplates/" + t.name;
    m.target_size = size;
    auto mop = compute().InsertInstanceGroupManager(kProject, m);
    EXPECT_TRUE(mop.ok()) << mop.status().ToString();
    if (mop.ok()) AwaitDone(*mop);
    JoinGroup g;
    g.name = name;
    g.project = kProject;
    g.zone = kZone;
    g.mig = name;
    g.requested = size;
    g.bootstrap = true;
    g.control_plane = "10.0.0.2:6443";
    g.labels = {{"cloud.google.com/tpu-node-group", name}};
    return g;
  }

  std::vector<std::string> VmNames(const std::string& mig) {
    std::vector<std::string> out;
    auto vms = compute().ListManagedInstances(kProject, kZone, mig);
    EXPECT_TRUE(vms.ok()) << vms.status().ToString();
    if (vms.ok())
      for (const auto& vm : *vms) out.push_back(vm.name);
    return out;
  }
  std::string TokenOn(const std::string& vm) {
    auto instance = compute().GetInstance(kProject, kZone, vm);
    EXPECT_TRUE(instance.ok()) << instance.status().ToString();
    if (instance.ok())
      for (const auto& [k, v] : instance->metadata)
        if (k == "kubeadm-join-token") return v;
    return "";
  }
  std::vector<nlohmann::json> Secrets() {
    kube::ListOptions o;
    o.label_selector = kGroupLabel;
    auto list = kube_->List(res::kSecrets, "kube-system", o);
    return list.ok() ? list->items : std::vector<nlohmann::json>{};
  }
  void AddNode(const std::string& name, const std::string& provider_id, const std::string& group) {
    nlohmann::json node = {{"apiVersion", "v1"},
                           {"kind", "Node"},
                           {"metadata", {{"name", name}, {"labels", {{"cloud.google.com/tpu-node-group", group}}}}},
                           {"spec", {{"providerID", provider_id}}}};
    ASSERT_TRUE(kube_->Create(res::kNodes, "", node).ok());
  }
  bool NodeExists(const std::string& name) { return kube_->Get(res::kNodes, "", name).ok(); }

  cloud::ComputeClient& compute() { return cloud_->compute(); }

  kubesim::KubeApiServer api_{{}};
  std::unique_ptr<kube::RestClient> kube_;
  std::unique_ptr<NodeJoiner> joiner_;
  int64_t now_ = 1800000000;
};

TEST_F(NodeJoinerTest, EachRunningVmGetsOneTokenAPassLaterStillTheSame) {
  JoinGroup g = MakeGroup("serve", 2);
  auto status = joiner_->Sync(kProject, {g});
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].phase, "Joining");
  EXPECT_EQ(status[0].running, 2);
  EXPECT_EQ(status[0].last_error, "");
  ASSERT_EQ(Secrets().size(), 2u);
  std::map<std::string, std::string> first;
  for (const auto& vm : VmNames("serve")) first[vm] = TokenOn(vm);
  joiner_->Sync(kProject, {g});
  EXPECT_EQ(Secrets().size(), 2u);
  for (const auto& [vm, token] : first) EXPECT_EQ(TokenOn(vm), token);
  EXPECT_EQ(joiner_->counters().tokens_issued, 2);
}

TEST_F(NodeJoinerTest, AnExpiredTokenIsTakenOffTheVmAndReplaced) {
  JoinGroup g = MakeGroup("serve", 1);
  joiner_->Sync(kProject, {g});
  const std::string vm = VmNames("serve")[0];
  const std::string old_token = TokenOn(vm);
  now_ += kTokenLifetimeSeconds;  // the token has run out
  joiner_->Sync(kProject, {g});
  const std::string new_token = TokenOn(vm);
  EXPECT_FALSE(new_token.empty());
  EXPECT_NE(new_token, old_token);
  ASSERT_EQ(Secrets().size(), 1u) << "the expired Secret went";
  EXPECT_EQ(Secrets()[0]["metadata"]["name"], "bootstrap-token-" + new_token.substr(0, 6));
  EXPECT_EQ(joiner_->counters().tokens_expired, 1);
}

TEST_F(NodeJoinerTest, AJoinedVmIsLabelledAndItsTokenRevoked) {
  JoinGroup g = MakeGroup("serve", 1);
  g.labels["cloud.google.com/gke-tpu-topology"] = "2x2x1";
  joiner_->Sync(kProject, {g});
  const std::string vm = VmNames("serve")[0];
  AddNode(vm, std::string("gce://") + kProject + "/" + kZone + "/" + vm, "");
  auto status = joiner_->Sync(kProject, {g});
  EXPECT_EQ(status[0].joined, 1);
  EXPECT_EQ(status[0].ready, 0) << "no Ready condition yet";
  EXPECT_EQ(TokenOn(vm), "");
  EXPECT_TRUE(Secrets().empty());
  auto node = kube_->Get(res::kNodes, "", vm);
  EXPECT_EQ((*node)["metadata"]["labels"]["cloud.google.com/gke-tpu-topology"], "2x2x1");
  EXPECT_EQ((*node)["metadata"]["labels"]["cloud.google.com/tpu-node-group"], "serve");
}

TEST_F(NodeJoinerTest, OnlyNodesWhoseVmIsGoneAreDeleted) {
  JoinGroup serve = MakeGroup("serve", 1);
  MakeGroup("other", 1);  // a group this pass does not know about
  const std::string other_vm = VmNames("other")[0];
  AddNode("other-node", std::string("gce://") + kProject + "/" + kZone + "/" + other_vm, "other");
  AddNode("gone-node", std::string("gce://") + kProject + "/" + kZone + "/serve-zzzz", "serve");
  AddNode("foreign-node", std::string("gce://another-project/") + kZone + "/x", "serve");
  AddNode("unlabelled", std::string("gce://") + kProject + "/" + kZone + "/nothing-here", "");
  ASSERT_TRUE(kube_->MergePatch(res::kNodes, "", "unlabelled", {{"metadata", {{"labels", {{"cloud.google.com/tpu-node-group", nullptr}}}}}}).ok());
  joiner_->Sync(kProject, {serve});
  EXPECT_FALSE(NodeExists("gone-node"));
  EXPECT_TRUE(NodeExists("other-node")) << "its VM exists, whatever group it is in";
  EXPECT_TRUE(NodeExists("foreign-node")) << "another project's: not ours to judge";
  EXPECT_TRUE(NodeExists("unlabelled")) << "no node-group label: not one of ours";
  EXPECT_EQ(joiner_->counters().nodes_deleted, 1);
}

TEST_F(NodeJoinerTest, CordonTouchesOnlyTheGroupsNodes) {
  AddNode("a", "gce://p/z/a", "serve");
  AddNode("b", "gce://p/z/b", "keep");
  ASSERT_TRUE(joiner_->Cordon("serve").ok());
  EXPECT_TRUE((*kube_->Get(res::kNodes, "", "a"))["spec"].value("unschedulable", false));
  EXPECT_FALSE((*kube_->Get(res::kNodes, "", "b"))["spec"].value("unschedulable", false));
  EXPECT_EQ(joiner_->counters().nodes_cordoned, 1);
}

TEST_F(NodeJoinerTest, AGroupWithoutItsMigIsAbsentAndTokensOfGroupsGoneAreDeleted) {
  JoinGroup serve = MakeGroup("serve", 1);
  joiner_->Sync(kProject, {serve});
  ASSERT_EQ(Secrets().size(), 1u);
  JoinGroup later;
  later.name = "later";
  later.project = kProject;
  later.zone = kZone;
  later.mig = "later";
  later.requested = 2;
  auto status = joiner_->Sync(kProject, {later});
  EXPECT_EQ(status[0].phase, "Absent");
  EXPECT_TRUE(Secrets().empty()) << "serve left git: its token goes with it";
}

TEST_F(NodeJoinerTest, NoGroupsAndNothingOfOursIsQuiet) {
  EXPECT_FALSE(joiner_->quiet()) << "nothing looked at yet";
  joiner_->Sync(kProject, {});
  EXPECT_TRUE(joiner_->quiet());
  AddNode("left-over", "gce://proj-c/us-central1-a/gone", "serve");
  joiner_->Sync(kProject, {});
  EXPECT_FALSE(NodeExists("left-over"));
  EXPECT_FALSE(joiner_->quiet()) << "a pass that cleaned something up is not quiet";
  joiner_->Sync(kProject, {});
  EXPECT_TRUE(joiner_->quiet());
}

}  // namespace
}  // namespace tpu::nodes
