// Git-level bad input against the running daemon (`watch`): a corrupt object,
// a symlink out of the repository, a 10 MB file, a YAML alias bomb, a target
// directory deleted, a branch force-pushed backwards, an unreachable remote.
// Each lands in a commit that also grows another target. Checked each time: a
// clear error for the affected target in /status, zero mutating calls for it
// (the emulator's per-cluster counter), and the other target applied.
// (The manifest corpus itself is tests/manifest/corpus_test.cc.)
#include <cstdio>

#include "reliability/capacity_stages.h"
#include "reliability/reliability_env.h"

namespace tpu::reliability {
namespace {

using daemon::testing::DaemonProcess;
using test_support::MetadataServer;
using source::testing::CommitAll;
using source::testing::Git;
using source::testing::WriteFile;

constexpr const char* kGkeCounter = "proj-rel/us-east5/gke";
constexpr const char* kOtherCounter = "proj-rel/us-east5/other";

std::string Cluster(const std::string& name) {
  return "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " + name +
         "\nspec:\n  location: us-east5\n";
}
std::string Train(int slices) { return V6ePool("train", "2x2", "  slices: " + std::to_string(slices) + "\n"); }

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 5}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    for (const char* c : {"gke", "other"}) ASSERT_TRUE(emu_->EnsureCluster(kProject, kGkeRegion, c).ok());
    checkout_ = tmp_.path() / "checkout";
    source::testing::InitRepo(checkout_);
    for (const char* c : {"gke", "other"}) {
      WriteFile(checkout_ / "deploy/proj-rel" / c / "cluster.yaml", Cluster(c));
      WriteFile(checkout_ / "deploy/proj-rel" / c / "pools.yaml", Train(1));
    }
    first_ = CommitAll(checkout_, "one slice each");
  }

  std::unique_ptr<DaemonProcess> Start(std::vector<std::string> args) {
    auto d = std::make_unique<DaemonProcess>(std::move(args), (tmp_.path() / "daemon.log").string(),
                                             emu_->endpoint(), metadata_.host());
    EXPECT_TRUE(WaitInSync(*d, first_, "proj-rel/gke", 4)) << d->Log();
    EXPECT_TRUE(WaitInSync(*d, first_, "proj-rel/other", 4)) << d->Log();
    emu_->ResetCounters();
    return d;
  }
  std::unique_ptr<DaemonProcess> StartOnCheckout() { return Start({"--repo", checkout_.string()}); }

  static bool WaitInSync(DaemonProcess& d, const std::string& revision, const std::string& key, int chips) {
    return WaitUntil([&] {
      json t = d.Target(key);
      return t.is_object() && t["revision"] == revision && t["state"] == "in-sync" && t["liveChips"] == chips;
    });
  }

  int64_t Mutations(const std::string& cluster) {
    auto m = emu_->counters().mutations_by_cluster;
    auto it = m.find(cluster);
    return it == m.end() ? 0 : it->second;
  }

  // After a commit at `head` that broke proj-rel/gke and grew proj-rel/other:
  // other applied, gke in `state` with `message` in its /status entry, and no
  // mutating call for gke.
  void ExpectContained(DaemonProcess& d, const std::string& head, const std::string& state,
                       const std::string& message) {
    ASSERT_TRUE(WaitInSync(d, head, "proj-rel/other", 8)) << d.Status().dump(2);
    ASSERT_TRUE(WaitUntil([&] {
      json t = d.Target("proj-rel/gke");
      return t.is_object() && t["revision"] == head;
    })) << d.Status().dump(2);
    json t = d.Target("proj-rel/gke");
    EXPECT_EQ(t["state"], state) << t.dump(2);
    EXPECT_NE(t.dump().find(message), std::string::npos) << "expected \"" << message << "\" in\n" << t.dump(2);
    EXPECT_EQ(Mutations(kGkeCounter), 0) << emu_->counters().ToJson().dump();
    EXPECT_GT(Mutations(kOtherCounter), 0);
    EXPECT_FALSE(d.Exited());
  }

  TempDir tmp_;
  fs::path checkout_;
  std::string first_;
  test_support::MetadataServer metadata_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

TEST_F(BadInputTest, CorruptObjectBlocksItsTargetOnly) {
  auto d = StartOnCheckout();
  WriteFile(checkout_ / "deploy/proj-rel/gke/pools.yaml", Train(3));
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  Git(checkout_, "add -A");
  const std::string tree = Git(checkout_, "write-tree");
  // The new blob of gke/pools.yaml, loose, overwritten with garbage before any commit names it.
  const std::string blob = Git(checkout_, "rev-parse " + tree + ":deploy/proj-rel/gke/pools.yaml");
  const fs::path object = checkout_ / ".git/objects" / blob.substr(0, 2) / blob.substr(2);
  ASSERT_TRUE(fs::exists(object));
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(object, std::ios::binary | std::ios::trunc) << "this is not a zlib stream";
  const std::string head = Git(checkout_, "commit-tree " + tree + " -p HEAD -m corrupt");
  Git(checkout_, "update-ref refs/heads/main " + head);
  ExpectContained(*d, head, "blocked", "deploy/proj-rel/gke/pools.yaml");
}

TEST_F(BadInputTest, SymlinkOutOfTheRepoIsNotFollowed) {
  auto d = StartOnCheckout();
  WriteFile(tmp_.path() / "outside.yaml", Train(5));
  fs::remove(checkout_ / "deploy/proj-rel/gke/pools.yaml");
  fs::create_symlink(tmp_.path() / "outside.yaml", checkout_ / "deploy/proj-rel/gke/pools.yaml");
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  ExpectContained(*d, CommitAll(checkout_, "symlink"), "blocked", "symbolic link leaves the repository");
}

TEST_F(BadInputTest, TenMegabyteFileIsNotRead) {
  auto d = StartOnCheckout();
  std::string big = Train(1);
  big += "# " + std::string(10 << 20, 'x') + "\n";
  WriteFile(checkout_ / "deploy/proj-rel/gke/pools.yaml", big);
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  ExpectContained(*d, CommitAll(checkout_, "10 MB"), "blocked", "expected at most");
}

TEST_F(BadInputTest, YamlAliasBombIsStopped) {
  auto d = StartOnCheckout();
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c)
    bomb += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
            ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
            char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + "]\n";
  WriteFile(checkout_ / "deploy/proj-rel/gke/bomb.yaml", bomb);
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  ExpectContained(*d, CommitAll(checkout_, "alias bomb"), "blocked", "alias bomb");
}

TEST_F(BadInputTest, DeletedTargetDirectoryIsRefusedNotEmptied) {
  auto d = StartOnCheckout();
  fs::remove_all(checkout_ / "deploy/proj-rel/gke");
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  ExpectContained(*d, CommitAll(checkout_, "gke directory deleted"), "refused", "allow-mass-delete");
}

// A URL source: a bare origin the daemon clones, fed by pushes from the checkout.
class RemoteBadInputTest : public BadInputTest {
 protected:
  std::unique_ptr<DaemonProcess> StartOnRemote(std::vector<std::string> extra = {}) {
    origin_ = tmp_.path() / "origin.git";
    Git(tmp_.path(), "init -q --bare -b main " + origin_.string());
    Git(checkout_, "remote add origin " + origin_.string());
    Git(checkout_, "push -q origin main");
    std::vector<std::string> args = {"--repo", "file://" + origin_.string(), "--ref", "main", "--workdir",
                                     (tmp_.path() / "clone").string(), "--poll-interval", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Start(args);
  }
  fs::path origin_;
};

TEST_F(RemoteBadInputTest, ForcePushBackwardsIsHeldAndChangesNothing) {
  auto d = StartOnRemote({"--refuse-history-rewrite"});
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  const std::string second = CommitAll(checkout_, "grow other");
  Git(checkout_, "push -q origin main");
  ASSERT_TRUE(WaitInSync(*d, second, "proj-rel/other", 8)) << d->Status().dump(2);
  emu_->ResetCounters();

  Git(checkout_, "push -q --force origin " + first_ + ":refs/heads/main");
  ASSERT_TRUE(WaitUntil([&] {
    json s = d->Status();
    return s.is_object() && s["historyRewrite"].is_object() && s["historyRewrite"]["to"] == first_ &&
           s["historyRewrite"]["held"] == true;
  })) << d->Status().dump(2);
  EXPECT_EQ(d->Status()["revision"], second);
  EXPECT_NE(d->Log().find("history rewrite"), std::string::npos);
  EXPECT_EQ(emu_->counters().mutating_calls, 0);
}

TEST_F(RemoteBadInputTest, UnreachableRemoteIsReportedAndChangesNothing) {
  auto d = StartOnRemote();
  fs::rename(origin_, tmp_.path() / "origin-gone.git");
  ASSERT_TRUE(WaitUntil([&] {
    return d->Get("/metrics")->body.find("tpu_provisioner_fetches_total{result=\"error\"}") != std::string::npos;
  })) << d->Get("/metrics")->body;
  json s = d->Status();
  EXPECT_NE(s.dump().find("origin.git"), std::string::npos) << "the error names the remote\n" << s.dump(2);
  EXPECT_EQ(d->Get("/healthz")->status, 200);
  EXPECT_EQ(emu_->counters().mutating_calls, 0);
  EXPECT_EQ(d->Target("proj-rel/gke")["state"], "in-sync");

  // Back again: the next change is applied.
  fs::rename(tmp_.path() / "origin-gone.git", origin_);
  WriteFile(checkout_ / "deploy/proj-rel/other/pools.yaml", Train(2));
  const std::string second = CommitAll(checkout_, "grow other");
  Git(checkout_, "push -q origin main");
  EXPECT_TRUE(WaitInSync(*d, second, "proj-rel/other", 8)) << d->Status().dump(2);
}

}  // namespace
}  // namespace tpu::reliability
