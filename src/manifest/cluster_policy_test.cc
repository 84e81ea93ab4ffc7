// Cluster.spec.drift, spec.mode and spec.changeWindows as the loader reads
// them: values and defaults, and each bad window an error at its line naming
// the field and what was expected.
#include <gtest/gtest.h>

#include "manifest/loader.h"
#include "manifest/fake_tree.h"

namespace tpu::manifest {
namespace {

Repo Load(const std::string& spec) {
  FakeTree tree;
  tree.Write("deploy/my-proj/c/cluster.yaml",
             "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c\nspec:\n" + spec);
  return LoadRepo(tree);
}

std::vector<std::string> Errors(const Repo& repo) {
  std::vector<std::string> out;
  for (const auto& e : repo.AllErrors()) out.push_back(e.ToString());
  return out;
}

TEST(ClusterPolicyTest, DriftModeAndWindows) {
  Repo repo = Load("  location: us-central1-a\n  drift: warn\n  mode: cleanupOnly\n  changeWindows:\n"
                   "    - kind: deny\n      schedule: \"0 18 * * 5\"\n      duration: 64h\n      timeZone: Europe/Paris\n"
                   "    - kind: allow\n      start: 2026-12-01T00:00:00Z\n      end: 2026-12-02T00:00:00Z\n");
  ASSERT_TRUE(repo.AllErrors().empty()) << Errors(repo)[0];
  const ClusterPolicy& p = repo.targets[0].policy;
  EXPECT_EQ(p.drift, DriftMode::kWarn);
  EXPECT_EQ(p.mode, TargetMode::kCleanupOnly);
  ASSERT_EQ(p.change_windows.size(), 2u);
  EXPECT_FALSE(p.change_windows[0].allow);
  EXPECT_EQ(p.change_windows[0].duration_seconds, 64 * 3600);
  EXPECT_EQ(p.change_windows[0].time_zone, "Europe/Paris");
  EXPECT_EQ(p.change_windows[0].where.line, 10);
  EXPECT_TRUE(p.change_windows[1].allow);
  EXPECT_EQ(p.change_windows[1].start, "2026-12-01T00:00:00Z");
}

TEST(ClusterPolicyTest, Defaults) {
  Repo repo = Load("  location: us-central1-a\n");
  const ClusterPolicy& p = repo.targets[0].policy;
  EXPECT_EQ(p.drift, DriftMode::kCorrect);
  EXPECT_EQ(p.mode, TargetMode::kNormal);
  EXPECT_TRUE(p.change_windows.empty());
}

TEST(ClusterPolicyTest, BadWindowsAreErrorsAtTheirLines) {
  Repo repo = Load("  changeWindows:\n"
                   "    - kind: deny\n      schedule: \"0 25 * * 5\"\n      duration: 1h\n"
                   "    - kind: deny\n      schedule: \"0 1 * * 5\"\n      duration: 1h\n      timeZone: Mars/Base\n"
                   "    - kind: allow\n      start: tomorrow\n      end: 2026-12-02T00:00:00Z\n"
                   "    - kind: deny\n      schedule: \"0 1 * * 5\"\n"
                   "    - kind: deny\n      schedule: \"0 1 * * 5\"\n      duration: 1h\n      start: 2026-12-01T00:00:00Z\n"
                   "  drift: sometimes\n");
  EXPECT_EQ(Errors(repo),
            (std::vector<std::string>{
                "deploy/my-proj/c/cluster.yaml:8:7: spec.changeWindows[0].schedule: cron hour: invalid \"25\" (expected 0–23)",
                "deploy/my-proj/c/cluster.yaml:13:7: spec.changeWindows[1].timeZone: time zone \"Mars/Base\": not in /usr/share/zoneinfo",
                "deploy/my-proj/c/cluster.yaml:15:7: spec.changeWindows[2].start: \"tomorrow\": expected RFC 3339, e.g. 2026-12-24T18:00:00Z",
                "deploy/my-proj/c/cluster.yaml:18:7: spec.changeWindows[3].duration: required field is missing (how long the window stays open after each time the schedule fires)",
                "deploy/my-proj/c/cluster.yaml:19:7: spec.changeWindows[4]: expected either schedule (with duration) or start and end",
                "deploy/my-proj/c/cluster.yaml:23:3: spec.drift: expected one of correct, warn; got string \"sometimes\""}));
}

}  // namespace
}  // namespace tpu::manifest
