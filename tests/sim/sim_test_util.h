// Test helpers for the cloud emulator: an independent HTTP client (libcurl,
// not our src/cloud client, so the emulator is checked against the wire
// contract only), an emulator with test-sized latencies, and polling with a
// deadline instead of sleeps.
#pragma once

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/cloud_emulator.h"

namespace tpu::sim::testing {

using json = nlohmann::json;

struct HttpResult {
  long status = 0;      // 0 when the transfer failed
  CURLcode curl = CURLE_OK;
  std::string raw;
  json body;            // parsed raw, or null
};

class Http {
 public:
  explicit Http(std::string base, std::string token = "test-token")
      : base_(std::move(base)), token_(std::move(token)) {}

  HttpResult Call(const std::string& method, const std::string& path,
                  const std::optional<json>& body = std::nullopt) const {
    return CallRaw(method, path, body ? body->dump() : std::string(), body.has_value());
  }
  HttpResult CallRaw(const std::string& method, const std::string& path, const std::string& body,
                     bool send_body = true) const {
    HttpResult r;
    CURL* c = curl_easy_init();
    std::string url = base_ + path;
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_slist* headers = nullptr;
    if (!token_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    if (send_body) {
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* u) {
      static_cast<std::string*>(u)->append(p, s * n);
      return s * n;
    });
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.raw);
    r.curl = curl_easy_perform(c);
    if (r.curl == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    r.body = json::parse(r.raw, nullptr, false);
    if (r.body.is_discarded()) r.body = nullptr;
    return r;
  }
  HttpResult Get(const std::string& p) const { return Call("GET", p); }
  HttpResult Post(const std::string& p, const json& b = json::object()) const { return Call("POST", p, b); }
  HttpResult Put(const std::string& p, const json& b) const { return Call("PUT", p, b); }
  HttpResult Delete(const std::string& p) const { return Call("DELETE", p); }

 private:
  std::string base_, token_;
};

// Polls `done` until it holds or `timeout` passes; the polling interval is
// short so tests finish as soon as the awaited state appears.
inline bool PollUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

inline CloudEmulatorOptions FastOptions() {
  CloudEmulatorOptions o;
  o.op_latency_ms = {{"default", 20}};
  if (const char* rec = std::getenv("TPU_SIM_RECORD")) o.record_file = rec;
  return o;
}

// An emulator with a cluster "c1" in p1/us-central1-a and a client for it.
class EmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override { StartWith(FastOptions()); }
  void TearDown() override { if (emu_) emu_->Stop(); }

  void StartWith(CloudEmulatorOptions o) {
    if (emu_) emu_->Stop();
    emu_ = std::make_unique<CloudEmulator>(std::move(o));
    ASSERT_TRUE(emu_->Start().ok());
    http_ = std::make_unique<Http>(emu_->endpoint());
    ASSERT_TRUE(emu_->EnsureCluster("p1", "us-central1-a", "c1").ok());
  }

  static std::string Pools(const std::string& cluster = "c1") {
    return "/v1/projects/p1/locations/us-central1-a/clusters/" + cluster + "/nodePools";
  }
  static std::string Op(const json& op) {
    return "/v1/projects/p1/locations/" + op["location"].get<std::string>() + "/operations/" +
           op["name"].get<std::string>();
  }
  // Waits for a GKE operation to be DONE and returns it.
  json WaitGke(const json& op) {
    json last;
    EXPECT_TRUE(PollUntil([&] {
      last = http_->Get(Op(op)).body;
      return last.value("status", "") == "DONE";
    })) << last.dump();
    return last;
  }
  // Creates a pool and waits for its operation.
  json CreatePool(const json& pool) {
    auto r = http_->Post(Pools(), {{"nodePool", pool}});
    EXPECT_EQ(r.status, 200) << r.raw;
    return WaitGke(r.body);
  }

  std::unique_ptr<CloudEmulator> emu_;
  std::unique_ptr<Http> http_;
};

inline json V6ePool(const std::string& name, const std::string& topology = "4x4", int nodes = 4) {
  return {{"name", name},
          {"initialNodeCount", nodes},
          {"config", {{"machineType", "ct6e-standard-4t"}}},
          {"placementPolicy", {{"type", "COMPACT"}, {"tpuTopology", topology}}}};
}

}  // namespace tpu::sim::testing
