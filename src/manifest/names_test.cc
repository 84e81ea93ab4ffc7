// The Kubernetes and GCP name rules of names.h.
#include "manifest/names.h"

#include <gtest/gtest.h>

namespace tpu::manifest {
namespace {

TEST(NamesTest, LabelKeys) {
  EXPECT_EQ(CheckLabelKey("team"), "");
  EXPECT_EQ(CheckLabelKey("cloud.google.com/gke-spot"), "");
  EXPECT_EQ(CheckLabelKey("app.kubernetes.io/component"), "");
  EXPECT_EQ(CheckLabelKey("a_b.c-d"), "");
  EXPECT_NE(CheckLabelKey(""), "");
  EXPECT_NE(CheckLabelKey("-team"), "");
  EXPECT_NE(CheckLabelKey("team!"), "");
  EXPECT_NE(CheckLabelKey("Example.COM/x"), "");
  EXPECT_NE(CheckLabelKey("a/b/c"), "");
  EXPECT_NE(CheckLabelKey(std::string(64, 'a')), "");
  EXPECT_EQ(CheckLabelKey(std::string(63, 'a')), "");
}

TEST(NamesTest, LabelValues) {
  EXPECT_EQ(CheckLabelValue(""), "");
  EXPECT_EQ(CheckLabelValue("true"), "");
  EXPECT_EQ(CheckLabelValue("v1.2_x-y"), "");
  EXPECT_NE(CheckLabelValue("has space"), "");
  EXPECT_NE(CheckLabelValue("trailing-"), "");
  EXPECT_NE(CheckLabelValue(std::string(64, 'x')), "");
}

TEST(NamesTest, ResourceLabels) {
  EXPECT_EQ(CheckResourceLabelKey("cost-center"), "");
  EXPECT_NE(CheckResourceLabelKey("Cost"), "");
  EXPECT_NE(CheckResourceLabelKey("1abc"), "");
  EXPECT_EQ(CheckResourceLabelValue(""), "");
  EXPECT_NE(CheckResourceLabelValue("UPPER"), "");
}

TEST(NamesTest, Rfc1035AndProjects) {
  EXPECT_EQ(CheckRfc1035("v5e-4x8-0", 40), "");
  EXPECT_NE(CheckRfc1035("4x8", 40), "");
  EXPECT_NE(CheckRfc1035("a_b", 40), "");
  EXPECT_EQ(CheckRfc1035(std::string(41, 'a'), 40), "is 41 characters; expected at most 40");
  EXPECT_EQ(CheckProjectId("ml-research-prod"), "");
  EXPECT_NE(CheckProjectId("short"), "");
  EXPECT_NE(CheckProjectId("My_Project"), "");
}

}  // namespace
}  // namespace tpu::manifest
