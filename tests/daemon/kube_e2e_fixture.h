// The fixture of `watch` end-to-end tests that talk to Kubernetes: a git
// repository, the cloud emulator, the Kubernetes API emulator with a client
// for the test, and a kubeconfig through which the real binary reaches it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/daemon_fixture.h"
#include "daemon/daemon_process.h"
#include "kube/rest_client.h"
#include "sim/kube/api_server.h"

namespace tpu::daemon::testing {

class KubeE2eFixture : public ::testing::Test {
 protected:
  explicit KubeE2eFixture(sim::CloudEmulatorOptions cloud = FastEmulatorOptions(),
                          kubesim::KubeApiServer::Options kube = {})
      : api_(std::move(kube)), cloud_(std::move(cloud)) {}

  void SetUp() override {
    ASSERT_TRUE(api_.Start().ok());
    kube::RestConfig rc;
    rc.server = api_.url();
    client_ = std::make_unique<kube::RestClient>(rc);
    kubeconfig_ = (tmp_.path() / "kubeconfig").string();
    WriteFile(kubeconfig_, "apiVersion: v1\nkind: Config\ncurrent-context: sim\nclusters:\n- name: sim\n  cluster:\n"
                           "    server: " + api_.url() + "\ncontexts:\n- name: sim\n  context:\n    cluster: sim\n"
                           "    user: sim\nusers:\n- name: sim\n  user:\n    token: sim-token\n");
    repo_ = tmp_.path() / "repo";
    InitRepo(repo_);
  }

  // `watch` on the repo through the kubeconfig (drift checks out of the way), then `args`.
  std::unique_ptr<DaemonProcess> Start(std::vector<std::string> args, const std::string& log = "daemon.log") {
    std::vector<std::string> all = {"--repo", repo_.string(), "--kubeconfig", kubeconfig_, "--drift-interval", "1h"};
    all.insert(all.end(), args.begin(), args.end());
    return std::make_unique<DaemonProcess>(all, (tmp_.path() / log).string(), cloud_.emulator().endpoint(),
                                           metadata_.host());
  }

  TempDir tmp_;
  std::filesystem::path repo_;
  std::string kubeconfig_;
  kubesim::KubeApiServer api_;
  std::unique_ptr<kube::RestClient> client_;
  CloudFixture cloud_;
  test_support::MetadataServer metadata_;
};

}  // namespace tpu::daemon::testing
