// End-to-end test of a capacity ladder through the real binary, the cloud
// emulator and the Kubernetes API emulator: the reservation has no room and
// on-demand stocks out, so the slice lands on spot; when the reservation gets
// room, `watch` moves it back, but not while an admitted Workload runs on it;
// when the Workload finishes, the move is made. A sampler watches the pools
// all along: never two creates of one pool, never more than the two pools of
// a create-before-delete move, and one pool once the move is over.
#include <atomic>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "daemon/kube_e2e_fixture.h"
#include "kube/resource.h"
#include "plan/ladder.h"
#include "plan/pool_slot.h"

namespace tpu::daemon {
namespace {

using namespace testing;
namespace res = kube::resources;

constexpr const char* kQueue = "tpu-queue";
constexpr const char* kFlavor = "tpu-v5-lite-podslice-2x2";  // v5e 2x2: one VM, 4 chips
constexpr const char* kTarget = "tpu-proj/c1";

std::string LadderPoolYaml() {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: train\nspec:\n"
         "  accelerator: v5e\n  topology: 2x2\n  location: us-central1-a\n  capacity:\n"
         "    - type: reservation\n      reservation: res-a\n    - type: onDemand\n    - type: spot\n";
}

// The reservation res-a of tpu-proj in the zone, `count` VMs of the pool's machine.
json Reservation(int count) {
  return {{"reservations", {{{"name", "res-a"}, {"project", kProject}, {"zone", kZone},
                             {"machineType", "ct5lp-hightpu-4t"}, {"count", count},
                             {"specificReservationRequired", true}}}}};
}

class CapacityLadderE2eTest : public KubeE2eFixture {
 protected:
  // The pools that fill slot train-0 now, by name, and what each runs on.
  std::map<std::string, std::string> Slice() {
    std::map<std::string, std::string> out;
    auto live = cloud_.connection().Refresh({kProject});
    if (!live.ok()) return out;
    for (const auto& c : live->projects[kProject].clusters)
      if (c.name == "c1")
        for (const auto& p : c.node_pools)
          if (plan::SlotOf(p) == "train-0") out[p.name] = plan::PoolCapacityName(p) + " " + p.status;
    return out;
  }
  // API calls of `method` to routes ending in `suffix`.
  int64_t Calls(const std::string& method, const std::string& suffix) {
    int64_t n = 0;
    for (const auto& [route, count] : cloud_.emulator().counters().calls_by_route)
      if (route.rfind(method + " ", 0) == 0 && route.size() >= suffix.size() &&
          route.compare(route.size() - suffix.size(), suffix.size(), suffix) == 0)
        n += count;
    return n;
  }
  json Ladder(DaemonProcess& d) {
    json s = d.Status();
    return s.is_object() && s["capacityLadder"].is_array() ? s["capacityLadder"] : json::array();
  }
  // No room in the reservation, no on-demand chips in the zone, spot chips;
  // a Kueue target with one slice on the ladder.
  void NoRoomButSpot() {
    json capacity = Reservation(0);
    capacity["zones"] = {{{"zone", kZone}, {"accelerator", "tpu-v5-lite-podslice"},
                          {"provisioningModel", "STANDARD"}, {"chips", 0}},
                         {{"zone", kZone}, {"accelerator", "tpu-v5-lite-podslice"},
                          {"provisioningModel", "SPOT"}, {"chips", 64}}};
    cloud_.emulator().SetCapacity(capacity);
    WriteFile(repo_ / "deploy/tpu-proj/c1/cluster.yaml",
              ClusterYaml("c1") + "  kueue:\n    clusterQueue: tpu-queue\n    mode: declared\n");
    WriteFile(repo_ / "deploy/tpu-proj/c1/pools.yaml", LadderPoolYaml());
    CommitAll(repo_, "a slice on a ladder");
  }
  // Workload job-a admitted on the slice's 4 chips, or finished.
  void Admit() {
    json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"},
               {"metadata", {{"name", "job-a"}, {"namespace", "default"}}},
               {"spec", {{"queueName", "user-queue"}, {"podSets", {{{"name", "main"}, {"count", 1}}}}}}};
    ASSERT_TRUE(client_->Create(res::kWorkloads, "default", wl).ok());
    json admission = {{"clusterQueue", kQueue},
                      {"podSetAssignments", {{{"name", "main"}, {"count", 1},
                                              {"flavors", {{"google.com/tpu", kFlavor}}},
                                              {"resourceUsage", {{"google.com/tpu", "4"}}}}}}};
    SetWorkloadStatus({{"admission", admission}, {"conditions", {{{"type", "Admitted"}, {"status", "True"}}}}});
  }
  void Finish() {
    SetWorkloadStatus({{"conditions", {{{"type", "Admitted"}, {"status", "True"}},
                                       {{"type", "Finished"}, {"status", "True"}}}}});
  }
  void SetWorkloadStatus(const json& status) {
    auto r = client_->MergePatch(res::kWorkloads, "default", "job-a", {{"status", status}}, "status");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
};

// Counts the pools of slot train-0 every 20 ms while it lives; most() is the
// largest count seen.
class SliceSampler {
 public:
  explicit SliceSampler(std::function<size_t()> count)
      : thread_([this, count] {
          while (running_) {
            size_t n = count();
            if (n > most_) most_ = n;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  ~SliceSampler() {
    running_ = false;
    thread_.join();
  }
  size_t most() const { return most_; }

 private:
  std::atomic<bool> running_{true};
  std::atomic<size_t> most_{0};
  std::thread thread_;
};

TEST_F(CapacityLadderE2eTest, StocksOutToSpotAndMovesBackToTheReservationOnceTheWorkloadIsDone) {
  NoRoomButSpot();
  SliceSampler sampler([this] { return Slice().size(); });
  auto d = Start({"--kube-resync-interval", "300ms", "--ladder-retry", "1s"});
  ASSERT_NE(d->Port(), 0) << d->Log();

  // Planned on on-demand (the reservation had no room), stocked out, landed on spot.
  ASSERT_TRUE(WaitUntil([&] { return Slice() == std::map<std::string, std::string>{{"train-0", "spot RUNNING"}}; }))
      << json(Slice()).dump() << d->Log();
  // Two creates (on-demand, stocked out; spot) and the failed pool's delete,
  // in one apply, before the first try to move back up (a second later).
  EXPECT_EQ(Calls("POST", "/nodePools"), 2) << cloud_.emulator().counters().ToJson().dump();
  EXPECT_EQ(Calls("DELETE", "/nodePools/{nodePool}"), 1);
  ASSERT_TRUE(WaitUntil([&] {
    json l = Ladder(*d);
    return l.size() == 1 && l[0]["rung"] == 2 && l[0]["capacity"] == "spot";
  })) << Ladder(*d).dump() << d->Log();
  // Still no room anywhere better: tries come and go, nothing moves.
  ASSERT_TRUE(WaitUntil([&] { return Ladder(*d)[0]["last"].get<std::string>().find("failed") != std::string::npos; }))
      << Ladder(*d).dump();
  EXPECT_EQ(Slice(), (std::map<std::string, std::string>{{"train-0", "spot RUNNING"}}));

  // watch reads the reservation the ladder names: its headroom is in /status.
  json target = d->Target(kTarget);
  ASSERT_EQ(target["reservations"].size(), 1u) << target.dump();
  EXPECT_EQ(target["reservations"][0]["name"], "res-a");
  EXPECT_EQ(target["reservations"][0]["found"], true);
  EXPECT_EQ(target["reservations"][0]["freeBefore"], 0);

  // A workload admitted on the slice's 4 chips.
  Admit();

  // The reservation gets room: the move is held while the workload runs.
  cloud_.emulator().SetCapacity(Reservation(1));
  ASSERT_TRUE(WaitUntil([&] { return Ladder(*d)[0]["last"].get<std::string>().find("held") != std::string::npos; }))
      << Ladder(*d).dump() << d->Log();
  EXPECT_NE(Ladder(*d)[0]["last"].get<std::string>().find("4 chips admitted"), std::string::npos)
      << Ladder(*d).dump();
  // Nothing is created while the move is held, try after try.
  const int64_t creates = Calls("POST", "/nodePools");
  const int tries = Ladder(*d)[0]["tries"].get<int>();
  ASSERT_TRUE(WaitUntil([&] { return Ladder(*d)[0]["tries"].get<int>() >= tries + 2; })) << Ladder(*d).dump();
  EXPECT_NE(Ladder(*d)[0]["last"].get<std::string>().find("held"), std::string::npos) << Ladder(*d).dump();
  EXPECT_EQ(Calls("POST", "/nodePools"), creates);
  EXPECT_EQ(Slice(), (std::map<std::string, std::string>{{"train-0", "spot RUNNING"}}));

  // The workload finishes: the slice moves to the reservation, created beside
  // the spot pool, which then goes.
  Finish();
  ASSERT_TRUE(WaitUntil([&] {
    auto s = Slice();
    return s.size() == 1 && s.begin()->second == "reservation res-a RUNNING";
  })) << json(Slice()).dump() << d->Log();
  ASSERT_TRUE(WaitUntil([&] { return Ladder(*d).empty(); })) << Ladder(*d).dump();
  const std::string moved = Slice().begin()->first;
  EXPECT_NE(moved, "train-0") << "the new pool was made beside the old one";
  // The next passes leave it alone: no move back and forth, no second pool.
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Target(kTarget);
    return s.is_object() && s["state"] == "in-sync";
  })) << d->Log();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Slice().size(), 1u);
  EXPECT_EQ(Slice().begin()->first, moved);
  EXPECT_LE(sampler.most(), 2u) << "at most the old and the new pool, during the move";
}

}  // namespace
}  // namespace tpu::daemon
