// A CloudEmulator on loopback with a CloudConnection pointed at it through the
// gcloud-style endpoint overrides, for client and refresh integration tests.
// Operations finish as soon as they are next looked at (latency 0) unless a
// test asks for slower ones.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/fake_env.h"
#include "cloud/cloud.h"
#include "sim/cloud_emulator.h"

namespace tpu::cloud::testing {

class EmulatorTest : public ::testing::Test {
 protected:
  void StartEmulator(int op_latency_ms = 0) {
    // The old connection goes first: an emulator stopping under a client's
    // idle keep-alive connection waits for it.
    cloud_.reset();
    emulator_.reset();
    sim::CloudEmulatorOptions options;
    options.op_latency_ms = {{"default", op_latency_ms}};
    options.required_token = "emu-token";
    emulator_ = std::make_unique<sim::CloudEmulator>(options);
    ASSERT_TRUE(emulator_->Start().ok());
    // The gcloud variables, in the forms gcloud users write them.
    auto endpoints = ResolveEndpoints(
        {}, FakeEnv({{"CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", emulator_->endpoint() + "/"},
                     {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", emulator_->endpoint() + "/compute/v1/"}}));
    ASSERT_TRUE(endpoints.ok());
    cloud_ = std::make_unique<CloudConnection>(std::make_unique<http::CurlTransport>(),
                                               std::make_unique<StaticTokenProvider>("emu-token"), *endpoints);
  }

  void SetUp() override { StartEmulator(); }

  // POSTs to a /sim/ control endpoint.
  void Control(const std::string& what, const nlohmann::json& body) {
    http::HttpRequest req;
    req.method = "POST";
    req.url = emulator_->endpoint() + "/sim/" + what;
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body.dump();
    auto res = cloud_->transport().Send(req);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    ASSERT_EQ(res->status, 200) << res->body;
  }

  // Polls until DONE. Operations here have zero latency, so this is a bounded
  // loop of GETs, never a sleep.
  Operation AwaitDone(Operation op) {
    for (int i = 0; i < 100 && !op.done(); ++i) {
      auto polled = cloud_->poller().Poll(op);
      EXPECT_TRUE(polled.ok()) << polled.status().ToString();
      if (!polled.ok()) break;
      op = *polled;
    }
    EXPECT_TRUE(op.done()) << op.name;
    return op;
  }

  std::unique_ptr<sim::CloudEmulator> emulator_;
  std::unique_ptr<CloudConnection> cloud_;
};

}  // namespace tpu::cloud::testing
