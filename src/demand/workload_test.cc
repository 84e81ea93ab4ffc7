// Leader pods and JobSet states from JSON; pool names.
#include "demand/workload.h"

#include <gtest/gtest.h>

#include "demand/names.h"

namespace tpu::demand {
namespace {

using nlohmann::json;

json Pod(const std::string& index = "0") {
  return json::parse(R"({
    "metadata": {"name": "train-slice-0-0-abcde", "namespace": "ml",
      "labels": {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/job-key": "0123456789abcdef0123456789abcdef01234567"},
      "annotations": {"batch.kubernetes.io/job-completion-index": ")" + index + R"("}},
    "spec": {"nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                              "cloud.google.com/gke-tpu-topology": "4x4", "team": "a"},
             "containers": [{"name": "main", "resources": {"limits": {"google.com/tpu": "4"}}}]},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
  })");
}

TEST(WorkloadTest, ParsesAWaitingLeader) {
  auto l = ParseLeader(Pod());
  ASSERT_TRUE(l);
  EXPECT_EQ(l->Key(), "ml/train-slice-0-0-abcde");
  EXPECT_EQ(l->JobSetKey(), "ml/train");
  EXPECT_EQ(l->accelerator, "tpu-v6e-slice");
  EXPECT_EQ(l->topology, "4x4");
  EXPECT_EQ(l->tpu_request, 4);
  EXPECT_FALSE(l->spot);
  EXPECT_FALSE(l->opted_out);
  EXPECT_EQ(l->node_selector.at("team"), "a");
}

TEST(WorkloadTest, IgnoresWhatIsNotAWaitingLeader) {
  EXPECT_FALSE(ParseLeader(Pod("1"))) << "a follower";
  json scheduled = Pod();
  scheduled["spec"]["nodeName"] = "n1";
  EXPECT_FALSE(ParseLeader(scheduled));
  json running = Pod();
  running["status"]["phase"] = "Running";
  EXPECT_FALSE(ParseLeader(running));
  json no_reason = Pod();
  no_reason["status"]["conditions"][0]["reason"] = "SchedulerError";
  EXPECT_FALSE(ParseLeader(no_reason));
  json no_tpu = Pod();
  no_tpu["spec"]["containers"][0]["resources"] = json::object();
  EXPECT_FALSE(ParseLeader(no_tpu));
  json no_topology = Pod();
  no_topology["spec"]["nodeSelector"].erase("cloud.google.com/gke-tpu-topology");
  EXPECT_FALSE(ParseLeader(no_topology));
  json deleting = Pod();
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_FALSE(ParseLeader(deleting));
  json no_jobset = Pod();
  no_jobset["metadata"]["labels"].erase("jobset.sigs.k8s.io/jobset-name");
  EXPECT_FALSE(ParseLeader(no_jobset));
}

TEST(WorkloadTest, SpotReservationOptOutAndRequestsAcrossContainers) {
  json p = Pod();
  p["spec"]["nodeSelector"]["cloud.google.com/gke-spot"] = "true";
  p["spec"]["nodeSelector"]["cloud.google.com/reservation-name"] = "res-a";
  p["metadata"]["annotations"]["tpu-provisioner.io/disable-autoprovisioning"] = "true";
  p["spec"]["containers"].push_back({{"name", "side"}, {"resources", {{"requests", {{"google.com/tpu", 4}}}}}});
  auto l = ParseLeader(p);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->spot);
  EXPECT_EQ(l->reservation, "res-a");
  EXPECT_TRUE(l->opted_out);
  EXPECT_EQ(l->tpu_request, 8);
}

// The GKE TPU Provisioner's keys on a pod: its opt-out (label or annotation),
// its annotations for node options, the shared reservation's project.
TEST(WorkloadTest, TheOriginalsKeys) {
  json p = Pod();
  p["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-uid"] = "uid-7";
  p["metadata"]["labels"]["team"] = "a";
  p["metadata"]["annotations"]["tpu-provisioner.cloud.google.com/copy-labels"] = "team";
  p["metadata"]["annotations"]["tpu-provisioner.cloud.google.com/additional-node-networks"] = "v:s";
  p["metadata"]["annotations"]["tpu-provisioner.cloud.google.com/node-service-account"] = "sa@p.iam.gserviceaccount.com";
  p["spec"]["nodeSelector"]["cloud.google.com/reservation-name"] = "res-a";
  p["spec"]["nodeSelector"]["cloud.google.com/reservation-project"] = "owner";
  p["spec"]["containers"][0]["resources"]["limits"]["example.com/chips"] = "8";
  auto l = ParseLeader(p);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->jobset_uid, "uid-7");
  EXPECT_EQ(l->labels.at("team"), "a");
  EXPECT_EQ(l->copy_labels, "team");
  EXPECT_EQ(l->additional_networks, "v:s");
  EXPECT_EQ(l->node_service_account, "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(l->reservation_project, "owner");
  EXPECT_EQ(l->Request("example.com/chips"), 8);
  EXPECT_EQ(l->Request("google.com/tpu"), 4);
  EXPECT_FALSE(l->opted_out);
  json label = Pod();
  label["metadata"]["labels"]["tpu-provisioner.cloud.google.com/disable-autoprovisioning"] = "true";
  EXPECT_TRUE(ParseLeader(label)->opted_out);
  json annotation = Pod();
  annotation["metadata"]["annotations"]["tpu-provisioner.cloud.google.com/disable-autoprovisioning"] = "true";
  EXPECT_TRUE(ParseLeader(annotation)->opted_out);
  // Another resource than google.com/tpu: still a leader (the cluster's
  // policy says which resource counts).
  json other = Pod();
  other["spec"]["containers"][0]["resources"] = {{"requests", {{"example.com/chips", "4"}}}};
  auto o = ParseLeader(other);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->tpu_request, 0);
  EXPECT_EQ(o->Request("example.com/chips"), 4);
}

TEST(WorkloadTest, JobSetStates) {
  JobSetState running = ParseJobSet(json::parse(
      R"({"metadata": {"name": "train", "namespace": "ml", "uid": "u-1"}, "status": {"restarts": 2,
          "conditions": [{"type": "Completed", "status": "False"}]}})"));
  EXPECT_FALSE(running.finished);
  EXPECT_EQ(running.restarts, 2);
  EXPECT_EQ(running.uid, "u-1");
  JobSetState done = ParseJobSet(json::parse(
      R"({"metadata": {"name": "train", "namespace": "ml"}, "status": {
          "conditions": [{"type": "Completed", "status": "True", "lastTransitionTime": "2026-11-22T07:00:00Z"}]}})"));
  EXPECT_TRUE(done.finished);
  EXPECT_EQ(done.outcome, "completed");
  EXPECT_NE(done.finished_at, TimePoint{});
  JobSetState failed = ParseJobSet(json::parse(
      R"({"metadata": {"name": "t", "namespace": "ml"}, "status": {"conditions": [{"type": "Failed", "status": "True"}]}})"));
  EXPECT_TRUE(failed.finished);
  EXPECT_EQ(failed.outcome, "failed");
  EXPECT_EQ(failed.finished_at, TimePoint{}) << "no time given: the controller's memory counts";
}

TEST(NamesTest, PoolNamesAreDeterministicShortAndValid) {
  std::string key = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(PoolName("train", key), "train-0123456789ab");
  EXPECT_EQ(PoolName("train", key), PoolName("train", key));
  EXPECT_NE(PoolName("train", key), PoolName("train", "f" + key.substr(1)));
  std::string long_name(80, 'a');
  std::string n = PoolName(long_name, key);
  EXPECT_EQ(n.size(), kMaxPoolName);
  EXPECT_EQ(n.substr(n.size() - 13), "-0123456789ab");
  EXPECT_EQ(PoolName("9lives.v2", key), "js-9lives-v2-0123456789ab");
  EXPECT_EQ(PoolName(std::string(26, 'b') + "-x", key), std::string(26, 'b') + "-0123456789ab")
      << "no dash left before the key's dash";
}

TEST(NamesTest, WorkloadOwnerReadsTheLabels) {
  cloud::NodePool p;
  EXPECT_FALSE(WorkloadOwner(p));
  p.resource_labels = cloud::StringMap{{kOwnerLabel, kOwnerWorkload}, {kPoolJobSetLabel, "train"},
                                       {kPoolNamespaceLabel, "ml"}, {kPoolJobKeyLabel, "k"}};
  auto o = WorkloadOwner(p);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->Key(), "ml/train");
  (*p.resource_labels)[kOwnerLabel] = "git";
  EXPECT_FALSE(WorkloadOwner(p));
}

}  // namespace
}  // namespace tpu::demand
