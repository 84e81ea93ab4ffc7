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
// `joins_nodes`: the base deployment also joins TPUNodeGroup VMs to the
// cluster (bootstrap-token Secrets, cluster-info, Node labels and removal).
// Both delete the DWS flex-start objects they made.
void CheckRbac(const std::vector<YAML::Node>& docs, const std::set<std::string>& lease_verbs,
               bool joins_nodes = false) {
  auto verbs = Verbs(docs);
  // The DWS flex-start check (our AdmissionCheck and ProvisioningRequestConfig)
  // goes when the last flex-start pool leaves git.
  std::set<std::string> deletable = {"coordination.k8s.io/leases", "kueue.x-k8s.io/admissionchecks",
                                     "kueue.x-k8s.io/provisioningrequestconfigs"};
  if (joins_nodes) deletable.insert({"/nodes", "/secrets"});
  for (const auto& [resource, vs] : verbs) {
    EXPECT_FALSE(vs.count("*")) << resource;
    if (!deletable.count(resource)) {
      EXPECT_FALSE(vs.count("delete")) << resource << ": nothing else we manage is ever deleted";
    }
    EXPECT_FALSE(resource.find('*') != std::string::npos) << resource;
  }
  if (joins_nodes) {
    EXPECT_EQ(verbs["/nodes"], (std::set<std::string>{"get", "list", "watch", "patch", "delete"}));
    EXPECT_EQ(verbs["/secrets"], (std::set<std::string>{"create", "get", "list", "delete"}));
    EXPECT_EQ(verbs["/configmaps"], (std::set<std::string>{"get"}));
    // Secrets in kube-system only, and the one ConfigMap cluster-info: namespaced Roles, never a ClusterRole.
    for (const auto& d : docs) {
      if (d["kind"].as<std::string>() != "ClusterRole") continue;
      for (const auto& rule : d["rules"])
        for (const auto& r : rule["resources"])
          EXPECT_TRUE(r.as<std::string>() != "secrets" && r.as<std::string>() != "configmaps")
              << d["metadata"]["name"] << " grants " << r << " cluster-wide";
    }
    const YAML::Node* tokens = Find(docs, "Role", "tpu-provisioner-bootstrap-tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ((*tokens)["metadata"]["namespace"].as<std::string>(), "kube-system");
    const YAML::Node* info = Find(docs, "Role", "tpu-provisioner-cluster-info");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ((*info)["metadata"]["namespace"].as<std::string>(), "kube-public");
    EXPECT_EQ((*info)["rules"][0]["resourceNames"][0].as<std::string>(), "cluster-info");
    for (const char* name : {"tpu-provisioner-bootstrap-tokens", "tpu-provisioner-cluster-info"}) {
      const YAML::Node* b = Find(docs, "RoleBinding", name);
      ASSERT_NE(b, nullptr) << name;
      EXPECT_EQ((*b)["metadata"]["namespace"].as<std::string>(),
                (*Find(docs, "Role", name))["metadata"]["namespace"].as<std::string>()) << name;
      EXPECT_EQ((*b)["subjects"][0]["name"].as<std::string>(), "tpu-provisioner") << name;
      EXPECT_EQ((*b)["subjects"][0]["namespace"].as<std::string>(), "tpu-provisioner") << name;
    }
  } else {
    EXPECT_EQ(verbs["/nodes"], (std::set<std::string>{"get", "list", "watch"}));
    EXPECT_FALSE(verbs.count("/secrets"));
  }
  EXPECT_TRUE(verbs["kueue.x-k8s.io/resourceflavors"].count("create"));
  EXPECT_TRUE(verbs["kueue.x-k8s.io/clusterqueues"].count("patch"));
  EXPECT_EQ(verbs["kueue.x-k8s.io/workloads"], (std::set<std::string>{"get", "list", "watch"}));
  EXPECT_EQ(verbs["coordination.k8s.io/leases"], lease_verbs);
}

TEST(DeployTest, BaseRenders) {
  if (!HaveKubectl()) GTEST_SKIP() << "kubectl not installed (Debian: kubernetes-client); deploy/ not checked";
  auto docs = Render("deploy/base");
  CheckObjects(docs);
  std::multiset<std::string> kinds;
  for (const auto& d : docs) kinds.insert(d["kind"].as<std::string>());
  for (const char* k : {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment"}) {
    EXPECT_EQ(kinds.count(k), 1u) << k;
  }
  // Leader election/shards in its namespace; bootstrap tokens in kube-system; cluster-info in kube-public.
  EXPECT_EQ(kinds.count("Role"), 3u);
  EXPECT_EQ(kinds.count("RoleBinding"), 3u);
  for (const auto& d : docs) {
    std::string kind = d["kind"].as<std::string>();
    if (kind == "Namespace" || kind.rfind("Cluster", 0) == 0) continue;
    if (kind == "Role" || kind == "RoleBinding") continue;  // checked in CheckRbac
    EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(), "tpu-provisioner") << kind;
  }
  EXPECT_EQ((*Find(docs, "Role", "tpu-provisioner-leader-election"))["metadata"]["namespace"].as<std::string>(),
            "tpu-provisioner");
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
  CheckRbac(docs, {"create", "delete", "get", "list", "update"}, /*joins_nodes=*/true);
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
