// CloudConnection::Open: the wiring cli uses — endpoints from the gcloud
// variables, a static token for the emulator, credential errors up front.
#include "cloud/cloud.h"

#include <map>

#include <gtest/gtest.h>

#include "base/fake_env.h"

#include "sim/cloud_emulator.h"

namespace tpu::cloud {
namespace {

TEST(CloudConnectionTest, OpensAgainstTheEmulatorFromGcloudVariables) {
  sim::CloudEmulatorOptions options;
  options.op_latency_ms = {{"default", 0}};
  options.required_token = "t0k";
  sim::CloudEmulator emulator(options);
  ASSERT_TRUE(emulator.Start().ok());
  ASSERT_TRUE(emulator.EnsureCluster("p", "us-east5", "c").ok());
  CloudOptions cloud_options;
  cloud_options.access_token = "t0k";
  auto cloud = CloudConnection::Open(
      cloud_options, FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", emulator.endpoint() + "/"},
                            {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", emulator.endpoint() + "/"}}));
  ASSERT_TRUE(cloud.ok()) << cloud.status().ToString();
  EXPECT_EQ((*cloud)->endpoints().compute_v1, emulator.endpoint() + "/compute/v1/");
  auto live = (*cloud)->Refresh({"p"});
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_EQ(live->projects.at("p").clusters.size(), 1u);
  EXPECT_EQ(live->projects.at("p").clusters[0].name, "c");
  cloud->reset();  // before the emulator stops (keep-alive)
}

TEST(CloudConnectionTest, WrongTokenIsPermissionDenied) {
  sim::CloudEmulatorOptions options;
  options.required_token = "right";
  sim::CloudEmulator emulator(options);
  ASSERT_TRUE(emulator.Start().ok());
  CloudOptions cloud_options;
  cloud_options.access_token = "wrong";
  cloud_options.endpoints = {emulator.endpoint() + "/", emulator.endpoint() + "/"};
  auto cloud = CloudConnection::Open(cloud_options, FakeEnv());
  ASSERT_TRUE(cloud.ok());
  auto clusters = (*cloud)->gke().ListClusters("p");
  ASSERT_FALSE(clusters.ok());
  EXPECT_EQ(clusters.error().http_status, 401);
  EXPECT_EQ(clusters.status().code(), Status::Code::kPermissionDenied);
  cloud->reset();
}

TEST(CloudConnectionTest, CredentialAndEndpointErrorsSurfaceAtOpen) {
  auto bad_creds = CloudConnection::Open({}, FakeEnv({{"GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json"}}));
  ASSERT_FALSE(bad_creds.ok());
  EXPECT_NE(bad_creds.status().message().find("/nonexistent/key.json"), std::string::npos);
  CloudOptions bad_endpoint;
  bad_endpoint.access_token = "";
  bad_endpoint.endpoints.container = "not a url";
  EXPECT_EQ(CloudConnection::Open(bad_endpoint, FakeEnv()).status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace tpu::cloud
