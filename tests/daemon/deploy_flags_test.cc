// deploy/ runs `watch` with flags the real binary accepts: every `--flag` in
// the rendered containers' args appears in `tpu-provisioner watch --help`,
// and both variants elect a leader. Skips when kubectl is not installed.
#include <cstdio>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace {

std::string Shell(const std::string& cmd, int* rc) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *rc = p ? pclose(p) : -1;
  return out;
}

// The args of every container and init container named tpu-provisioner.
std::vector<std::string> WatchArgs(const std::string& dir) {
  int rc = 0;
  std::string out = Shell("kubectl kustomize " + std::string(TPU_SOURCE_DIR) + "/" + dir, &rc);
  EXPECT_EQ(rc, 0) << out;
  std::vector<std::string> args;
  for (const auto& doc : YAML::LoadAll(out)) {
    if (doc["kind"].as<std::string>() != "Deployment") continue;
    const YAML::Node spec = doc["spec"]["template"]["spec"];
    for (const char* list : {"containers", "initContainers"})
      for (const auto& c : spec[list])
        if (c["name"].as<std::string>() == "tpu-provisioner")
          for (const auto& a : c["args"]) args.push_back(a.as<std::string>());
  }
  return args;
}

TEST(DeployFlagsTest, RenderedArgsAreFlagsWatchAccepts) {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) GTEST_SKIP() << "kubectl not installed";
  int rc = 0;
  const std::string help = Shell(std::string(TPU_BINARY) + " watch --help", &rc);
  ASSERT_EQ(rc, 0) << help;
  for (const char* dir : {"deploy/base", "deploy/kueue-sidecar"}) {
    std::vector<std::string> args = WatchArgs(dir);
    ASSERT_FALSE(args.empty()) << dir;
    EXPECT_EQ(args[0], "watch") << dir;
    std::set<std::string> flags;
    for (const auto& a : args) {
      if (a.rfind("--", 0) != 0) continue;
      std::string flag = a.substr(0, a.find('='));
      flags.insert(flag);
      EXPECT_NE(help.find(flag + " "), std::string::npos) << dir << ": " << flag << " is not a watch flag";
    }
    // The base deployment shares targets among its replicas; the sidecar follows Kueue's leader.
    EXPECT_TRUE(flags.count(std::string(dir) == "deploy/base" ? "--shard-mode" : "--leader-elect")) << dir;
    EXPECT_TRUE(flags.count("--in-cluster")) << dir;
  }
}

}  // namespace
