// deploy/device-plugin: the kustomization lists every file; the DaemonSet runs
// on TPUNodeGroup nodes only (the label join.sh gives them), tolerates the
// google.com/tpu taint, runs the image the kustomization names, mounts what a
// device plugin needs, and its service account has the plugin's RBAC and no
// more. Read with yaml-cpp; the rendered output is checked too when kubectl is
// installed.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(TPU_SOURCE_DIR) / "deploy" / "device-plugin";
constexpr char kImage[] = "gcr.io/gke-release/tpu-device-plugin:1.35.7-gke.0";

// Every document of every file the kustomization lists.
std::vector<YAML::Node> Resources() {
  std::vector<YAML::Node> docs;
  for (const auto& r : YAML::LoadFile((kDir / "kustomization.yaml").string())["resources"])
    for (const auto& d : YAML::LoadAllFromFile((kDir / r.as<std::string>()).string()))
      if (d.IsMap()) docs.push_back(d);
  return docs;
}

YAML::Node Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name) return d;
  ADD_FAILURE() << "no " << kind << " " << name;
  return YAML::Node();
}

std::set<std::string> Strings(const YAML::Node& list) {
  std::set<std::string> out;
  for (const auto& s : list) out.insert(s.as<std::string>());
  return out;
}

// The checks on the DaemonSet, raw or rendered.
void CheckDaemonSet(const YAML::Node& ds) {
  ASSERT_TRUE(ds.IsMap());
  EXPECT_EQ(ds["metadata"]["namespace"].as<std::string>(), "kube-system");
  const YAML::Node pod = ds["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "tpu-device-plugin");

  // Only TPUNodeGroup nodes: every term of the required affinity asks for the
  // node-group label, and no nodeSelector widens nor contradicts it.
  const YAML::Node terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                              ["nodeSelectorTerms"];
  ASSERT_GE(terms.size(), 1u);
  for (const auto& term : terms) {
    bool selects = false;
    for (const auto& e : term["matchExpressions"])
      selects |= e["key"].as<std::string>() == "cloud.google.com/tpu-node-group" &&
                 e["operator"].as<std::string>() == "Exists";
    EXPECT_TRUE(selects) << "a term that does not require cloud.google.com/tpu-node-group";
  }
  EXPECT_FALSE(pod["nodeSelector"]);

  bool tolerates = false;
  for (const auto& t : pod["tolerations"]) {
    EXPECT_TRUE(t["key"]) << "a toleration without a key tolerates every taint";
    tolerates |= t["key"].as<std::string>("") == "google.com/tpu" && t["operator"].as<std::string>() == "Exists" &&
                 t["effect"].as<std::string>() == "NoSchedule";
  }
  EXPECT_TRUE(tolerates) << "the google.com/tpu NoSchedule taint is not tolerated";

  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), kImage);
  EXPECT_EQ(c["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");

  // The kubelet's registration socket, and the chips under /dev and /sys.
  std::map<std::string, std::string> host_paths;  // volume → host path
  for (const auto& v : pod["volumes"])
    if (v["hostPath"]) host_paths[v["name"].as<std::string>()] = v["hostPath"]["path"].as<std::string>();
  std::map<std::string, std::string> mounted;  // host path → mount path
  for (const auto& m : c["volumeMounts"])
    mounted[host_paths[m["name"].as<std::string>()]] = m["mountPath"].as<std::string>();
  EXPECT_EQ(mounted["/var/lib/kubelet/device-plugins"], "/var/lib/kubelet/device-plugins");
  EXPECT_EQ(mounted["/dev"], "/dev");
  EXPECT_EQ(mounted["/sys"], "/sys");
}

TEST(DeployDevicePluginTest, KustomizationListsEveryFile) {
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.path().extension() == ".yaml" && e.path().filename() != "kustomization.yaml")
      files.insert(e.path().filename().string());
  const YAML::Node k = YAML::LoadFile((kDir / "kustomization.yaml").string());
  EXPECT_EQ(Strings(k["resources"]), files);
  EXPECT_EQ(k["namespace"].as<std::string>(), "kube-system");
}

TEST(DeployDevicePluginTest, DaemonSetRunsOnTPUNodeGroupNodesOnly) {
  CheckDaemonSet(Find(Resources(), "DaemonSet", "tpu-device-plugin"));
}

// The image is configurable through the kustomization's `images:`, which must
// name the DaemonSet's image (or kustomize would leave it alone).
TEST(DeployDevicePluginTest, ImageIsTheKustomizationsImage) {
  const YAML::Node ds = Find(Resources(), "DaemonSet", "tpu-device-plugin");
  const std::string image = ds["spec"]["template"]["spec"]["containers"][0]["image"].as<std::string>();
  const YAML::Node images = YAML::LoadFile((kDir / "kustomization.yaml").string())["images"];
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(image.substr(0, image.rfind(':')), images[0]["name"].as<std::string>());
  EXPECT_EQ(images[0]["newName"].as<std::string>() + ":" + images[0]["newTag"].as<std::string>(), kImage);
}

// The plugin labels its own Node and reads the Pods on it; nothing else.
TEST(DeployDevicePluginTest, RbacIsThePluginsAndNoMore) {
  const auto docs = Resources();
  Find(docs, "ServiceAccount", "tpu-device-plugin");
  const YAML::Node role = Find(docs, "ClusterRole", "tpu-device-plugin");
  std::map<std::string, std::set<std::string>> verbs;
  for (const auto& rule : role["rules"])
    for (const auto& r : rule["resources"])
      for (const auto& v : rule["verbs"]) verbs[r.as<std::string>()].insert(v.as<std::string>());
  EXPECT_EQ(verbs, (std::map<std::string, std::set<std::string>>{
                       {"nodes", {"get", "list", "watch", "patch"}},
                       {"pods", {"get", "list", "watch"}},
                   }));
  const YAML::Node binding = Find(docs, "ClusterRoleBinding", "tpu-device-plugin");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), "tpu-device-plugin");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), "tpu-device-plugin");
  EXPECT_EQ(binding["subjects"][0]["namespace"].as<std::string>(), "kube-system");
}

// What `kubectl apply -k` would send: the same DaemonSet, everything in kube-system.
TEST(DeployDevicePluginTest, RendersWithKubectl) {
  if (std::system("command -v kubectl >/dev/null 2>&1") != 0) GTEST_SKIP() << "kubectl not installed";
  FILE* p = popen(("kubectl kustomize " + kDir.string() + " 2>/dev/null").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ASSERT_EQ(p ? pclose(p) : -1, 0) << out;
  std::vector<YAML::Node> docs;
  for (const auto& d : YAML::LoadAll(out)) docs.push_back(d);
  CheckDaemonSet(Find(docs, "DaemonSet", "tpu-device-plugin"));
  for (const auto& d : docs) {
    if (d["metadata"]["namespace"]) {
      EXPECT_EQ(d["metadata"]["namespace"].as<std::string>(), "kube-system");
    }
  }
}

}  // namespace
