// A GCE metadata server on loopback that hands out one access token, so
// end-to-end tests run the binary with its real credential chain
// (GCE_METADATA_HOST) and no credential on the command line.
#pragma once

#include <string>
#include <thread>

#include <httplib.h>

namespace tpu::test_support {

class MetadataServer {
 public:
  explicit MetadataServer(std::string token = "e2e-token") {
    std::string body = R"({"access_token":")" + token + R"(","expires_in":3600,"token_type":"Bearer"})";
    server_.Get("/computeMetadata/v1/instance/service-accounts/default/token",
                [body](const httplib::Request&, httplib::Response& res) {
                  res.set_header("Metadata-Flavor", "Google");  // as the real server answers
                  res.set_content(body, "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~MetadataServer() {
    while (!server_.is_running()) std::this_thread::yield();
    server_.stop();
    thread_.join();
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace tpu::test_support
