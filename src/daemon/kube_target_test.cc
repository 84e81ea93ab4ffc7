// ChooseKubeTarget: --kube-target wins (and must exist), else the only target
// with spec.demand / spec.kueue; several candidates are an error.
#include "daemon/kube_target.h"

#include <gtest/gtest.h>

namespace tpu::daemon {
namespace {

manifest::Target T(const std::string& cluster, bool kueue, bool demand) {
  manifest::Target t;
  t.project = "p";
  t.cluster = cluster;
  if (kueue) t.policy.kueue = manifest::KueuePolicy{};
  if (demand) t.policy.demand = manifest::DemandPolicy{};
  return t;
}

TEST(KubeTargetTest, TheFlagWinsAndMustNameATarget) {
  manifest::Repo repo;
  repo.targets = {T("a", true, false), T("b", false, false)};
  for (auto use : {KubeTargetUse::kKueue, KubeTargetUse::kDemand}) {
    auto c = ChooseKubeTarget(repo, "p/b", use);
    ASSERT_NE(c.target, nullptr);
    EXPECT_EQ(c.target->Key(), "p/b");
    // Quota and demand agree on an unknown flag: no target, and why.
    auto unknown = ChooseKubeTarget(repo, "p/nope", use);
    EXPECT_EQ(unknown.target, nullptr);
    EXPECT_EQ(unknown.error, "--kube-target p/nope: no such target in the revision");
  }
}

TEST(KubeTargetTest, TheOnlyCandidateElseAnErrorOrNothing) {
  manifest::Repo repo;
  repo.targets = {T("a", true, false), T("b", true, true), T("c", false, false)};
  EXPECT_EQ(ChooseKubeTarget(repo, "", KubeTargetUse::kDemand).target->Key(), "p/b");
  auto several = ChooseKubeTarget(repo, "", KubeTargetUse::kKueue);
  EXPECT_EQ(several.target, nullptr);
  EXPECT_EQ(several.error,
            "several targets have spec.kueue (p/a, p/b); say which one this Kubernetes cluster is with --kube-target");
  // Demand falls back to the spec.kueue target once spec.demand is gone.
  repo.targets = {T("a", true, false), T("c", false, false)};
  EXPECT_EQ(ChooseKubeTarget(repo, "", KubeTargetUse::kDemand).target->Key(), "p/a");
  repo.targets = {T("c", false, false)};
  auto none = ChooseKubeTarget(repo, "", KubeTargetUse::kKueue);
  EXPECT_EQ(none.target, nullptr);
  EXPECT_EQ(none.error, "");
}

}  // namespace
}  // namespace tpu::daemon
