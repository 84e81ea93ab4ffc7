// Endpoint resolution: defaults, gcloud override variables in both prefix
// forms, and flags over variables.
#include "cloud/endpoints.h"

#include <map>

#include <gtest/gtest.h>

#include "base/fake_env.h"

namespace tpu::cloud {
namespace {

TEST(EndpointsTest, Defaults) {
  auto e = ResolveEndpoints({}, FakeEnv());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->container_root, "https://container.googleapis.com/");
  EXPECT_EQ(e->compute_v1, "https://compute.googleapis.com/compute/v1/");
}

TEST(EndpointsTest, GcloudOverridesServiceRootForm) {
  auto e = ResolveEndpoints({}, FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "http://127.0.0.1:8080/"},
                                       {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", "http://127.0.0.1:8080/"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->container_root, "http://127.0.0.1:8080/");
  EXPECT_EQ(e->compute_v1, "http://127.0.0.1:8080/compute/v1/");
}

TEST(EndpointsTest, ComputeOverrideWithVersionPathIsKept) {
  auto e = ResolveEndpoints({}, FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", "https://www.googleapis.com/compute/v1/"},
                                       {"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "https://c.example/v1/"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->compute_v1, "https://www.googleapis.com/compute/v1/");
  EXPECT_EQ(e->container_root, "https://c.example/");  // no "v1/v1/"
}

TEST(EndpointsTest, MissingTrailingSlashAndPathPrefixes) {
  auto e = ResolveEndpoints({"http://127.0.0.1:9/gke", "http://127.0.0.1:9/gce/compute"}, FakeEnv());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->container_root, "http://127.0.0.1:9/gke/");
  EXPECT_EQ(e->compute_v1, "http://127.0.0.1:9/gce/compute/v1/");
}

TEST(EndpointsTest, FlagsBeatVariables) {
  auto e = ResolveEndpoints({"http://127.0.0.1:1/", "http://127.0.0.1:2/compute/v1/"},
                            FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", "http://127.0.0.1:3/"},
                                   {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", "http://127.0.0.1:4/"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->container_root, "http://127.0.0.1:1/");
  EXPECT_EQ(e->compute_v1, "http://127.0.0.1:2/compute/v1/");
}

TEST(EndpointsTest, EmptyVariableMeansUnset) {
  auto e = ResolveEndpoints({}, FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", ""}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->container_root, "https://container.googleapis.com/");
}

TEST(EndpointsTest, BadUrlsAreInvalidArgument) {
  auto a = ResolveEndpoints({"127.0.0.1:8080", ""}, FakeEnv());
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "container endpoint \"127.0.0.1:8080\": expected http(s)://host[:port][/path]");
  EXPECT_FALSE(ResolveEndpoints({"", "ftp://x/"}, FakeEnv()).ok());
  EXPECT_FALSE(ResolveEndpoints({"http:///x", ""}, FakeEnv()).ok());
  EXPECT_FALSE(ResolveEndpoints({"http://h/?q=1", ""}, FakeEnv()).ok());
}

}  // namespace
}  // namespace tpu::cloud
