// deploy/: `kubectl kustomize` renders both variants, and the rendered
// objects have what the issue asks: the kinds, a restricted security context,
// probes on /healthz and /readyz, RBAC verbs limited to what is used, and the
// native sidecar shape. Skips when kubectl is not installed.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

bool HaveKubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

std::vector<YAML::Node> Render(const std::string& dir) {
  std::string cmd = "kubectl kustomize " + std::string(TPU_SOURCE_DIR) + "/" + dir + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = p ? pclose(p) : -1;
  EXPECT_EQ(rc, 0) << out;
  return YAML::LoadAll(out);
}

const YAML::Node* Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const auto& d : docs) {
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name) return &d;
  }
  return nullptr;
}

// Every object: apiVersion, kind, a DNS-style name.
void CheckObjects(const std::vector<YAML::Node>& docs) {
  for (const auto& d : docs) {
    ASSERT_TRUE(d["apiVersion"] && d["kind"] && d["metadata"]["name"]);
    std::string name = d["metadata"]["name"].as<std::string>();
    for (char c : name) EXPECT_TRUE(islower(c) || isdigit(c) || c == '-' || c == '.') << name;
  }
}

void CheckContainer(const YAML::Node& c, const std::string& port) {
  const YAML::Node sc = c["securityContext"];
  EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>());
  EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>());
  EXPECT_TRUE(sc["runAsNonRoot"].as<bool>());
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_EQ(sc["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["port"].as<std::string>(), port);
  EXPECT_NE(c["image"].as<std::string>().find("tpu-provisioner:v"), std::string::npos);
}

// Verbs by "group/resource" across ClusterRoles and Roles.
std::map<std::string, std::set<std::string>> Verbs(const std::vector<YAML::Node>& docs) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& d : docs) {
    std::string kind = d["kind"].as<std::string>();
    if (kind != "ClusterRole" && kind != "Role") continue;
    for (const auto& rule : d["rules"]) {
      for (const auto& g : rule["apiGroups"]) {
        for (const auto& r : rule["resources"]) {
          for (const auto& v : rule["verbs"]) {
            out[g.as<std::string>() + "/" + r.as<std::string>()].insert(v.as<std::string>());
          }
        }
      }
    }
  }
  return out;
}

// `lease_verbs`: the sidecar elects a leader; the base deployment also lists
// its shard set and deletes its own membership Lease when it stops.
void CheckRbac(const std::vector<YAML::Node>& docs, const std::set<std::string>& lease_verbs) {
  auto verbs = Verbs(docs);
  for (const auto& [resource, vs] : verbs) {
    EXPECT_FALSE(vs.count("*")) << resource;
    if (resource != "coordination.k8s.io/leases") {
      EXPECT_FALSE(vs.count("delete")) << resource << ": nothing we manage is ever deleted";
    }
    EXPECT_FALSE(resource.find('*') != std::string::npos) << resource;
  }
  EXPECT_EQ(verbs["/nodes"], (std::set<std::string>{"get", "list", "watch"}));
  EXPECT_TRUE(verbs["kueue.x-k8s.io/resourceflavors"].count("create"));
  EXPECT_TRUE(verbs["kueue.x-k8s.io/clusterqueues"].count("patch"));
  EXPECT_EQ(verbs["kueue.x-k8s.io/workloads"], (std::set<std::string>{"get", "list", "watch"}));
  EXPECT_EQ(verbs["coordination.k8s.io/leases"], lease_verbs);
  EXPECT_FALSE(verbs.count("/secrets"));
}

TEST(DeployTest, BaseRenders) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl not installed (Debian: kubernetes-client); deploy/ not checked";
  auto docs = Render("deploy/base");
  CheckObjects(docs);
  std::multiset<std::string> kinds;
  for (const auto& d : docs) kinds.insert(d["kind"].as<std::string>());
  for (const char* k : {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                        "ConfigMap", "Deployment"}) {
    EXPECT_EQ(kinds.count(k), 1u) << k;
  }
  const YAML::Node* dep = Find(docs, "Deployment", "tpu-provisioner");
  ASSERT_NE(dep, nullptr);
  EXPECT_EQ((*dep)["metadata"]["namespace"].as<std::string>(), "tpu-provisioner");
  const YAML::Node pod = (*dep)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "tpu-provisioner");
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  CheckContainer(pod["containers"][0], "http");
  const YAML::Node* sa = Find(docs, "ServiceAccount", "tpu-provisioner");
  ASSERT_NE(sa, nullptr);
  EXPECT_TRUE((*sa)["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]);
  EXPECT_EQ((*dep)["spec"]["replicas"].as<int>(), 3);  // sharded (docs/scaling.md)
  CheckRbac(docs, {"create", "delete", "get", "list", "update"});
}

TEST(DeployTest, KueueSidecarRenders) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl not installed (Debian: kubernetes-client); deploy/ not checked";
  auto docs = Render("deploy/kueue-sidecar");
  CheckObjects(docs);
  const YAML::Node* dep = Find(docs, "Deployment", "kueue-controller-manager");
  ASSERT_NE(dep, nullptr);
  EXPECT_EQ((*dep)["metadata"]["namespace"].as<std::string>(), "kueue-system");
  const YAML::Node pod = (*dep)["spec"]["template"]["spec"];
  EXPECT_FALSE(pod["containers"]) << "the patch must not replace Kueue's own containers";
  const YAML::Node sidecar = pod["initContainers"][0];
  EXPECT_EQ(sidecar["name"].as<std::string>(), "tpu-provisioner");
  EXPECT_EQ(sidecar["restartPolicy"].as<std::string>(), "Always");  // native sidecar
  CheckContainer(sidecar, "tpu-http");
  const YAML::Node* binding = Find(docs, "ClusterRoleBinding", "tpu-provisioner-kueue-sidecar");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ((*binding)["subjects"][0]["name"].as<std::string>(), "kueue-controller-manager");
  EXPECT_EQ((*binding)["subjects"][0]["namespace"].as<std::string>(), "kueue-system");
  CheckRbac(docs, {"create", "get", "update"});
}

}  // namespace
