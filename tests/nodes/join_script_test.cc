// deploy/node-bootstrap/join.sh run as a script, the way GCE runs it at boot,
// against a fake metadata server and a fake kubeadm first on PATH that records
// its argv and the JoinConfiguration it was given. Intervals are tens of
// milliseconds, so no test sleeps for seconds.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr char kToken[] = "abcdef.0123456789abcdef";
constexpr char kTokenSecret[] = "0123456789abcdef";
const std::string kHash = "sha256:" + std::string(64, 'c');
constexpr char kLabels[] =
    "cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice,cloud.google.com/gke-tpu-topology=2x2,"
    "cloud.google.com/gke-accelerator-count=4,cloud.google.com/tpu-node-group=g1";
constexpr char kProviderId[] = "gce://my-project/us-east5-b/g1-abcd";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The GCE metadata server as the script sees it: values under
// /computeMetadata/v1/, 404 for an absent key, 403 without the Metadata-Flavor
// header (as the real server answers). Counts the requests per path.
class FakeMetadata {
 public:
  FakeMetadata() {
    server_.Get(R"(/computeMetadata/v1/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Metadata-Flavor", "Google");
      if (req.get_header_value("Metadata-Flavor") != "Google") {
        res.status = 403;
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      const std::string path = req.matches[1];
      ++hits_[path];
      auto it = values_.find(path);
      if (it == values_.end()) {
        res.status = 404;
        return;
      }
      res.set_content(it->second, "application/text");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~FakeMetadata() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/computeMetadata/v1"; }
  void Set(const std::string& path, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    values_[path] = value;
  }
  int Hits(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return hits_[path];
  }
  // What every TPUNodeGroup VM has from boot: its identity and the template's metadata.
  void SetInstance() {
    Set("instance/name", "g1-abcd");
    Set("instance/zone", "projects/123456789/zones/us-east5-b");
    Set("project/project-id", "my-project");
    Set("instance/attributes/kube-labels", kLabels);
    Set("instance/attributes/kubernetes-version", "1.31");
  }
  // What the daemon sets once the VM is RUNNING.
  void SetJoinKeys(const std::string& endpoint = "10.0.0.2:6443") {
    Set("instance/attributes/kubeadm-join-token", kToken);
    Set("instance/attributes/kubeadm-control-plane-ip", endpoint);
    Set("instance/attributes/kubeadm-ca-hash", kHash);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::string> values_;
  std::map<std::string, int> hits_;
};

// Records each call's argv (one line), and for `join --config F` a copy of F
// and its mode; a successful join creates the kubelet kubeconfig, as kubeadm does.
constexpr char kFakeKubeadm[] = R"sh(#!/bin/bash
set -eu
d="$FAKE_KUBEADM_DIR"
printf '%s\n' "$*" >>"$d/argv"
case "$1" in
version) printf '%s\n' "${FAKE_KUBEADM_VERSION:-v1.31.2}" ;;
join)
  [ "$2" = --config ] || exit 64
  n=$(grep -c '^join' "$d/argv")
  cp "$3" "$d/config.$n"
  stat -c %a "$3" >"$d/mode.$n"
  rc="${FAKE_KUBEADM_JOIN_RC:-0}"
  if [ "$rc" = 0 ]; then mkdir -p "$(dirname "$KUBELET_KUBECONFIG")"; : >"$KUBELET_KUBECONFIG"; fi
  exit "$rc" ;;
esac
)sh";

class JoinScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/join-script-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "nobin");
    fs::create_directories(dir_ / "kubeadm");
    fs::create_directories(dir_ / "run");
    std::ofstream(dir_ / "bin" / "kubeadm") << kFakeKubeadm;
    fs::permissions(dir_ / "bin" / "kubeadm", fs::perms::owner_all);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Starts `bash join.sh` with the test's overrides; `with_kubeadm` puts the fake first on PATH.
  void Start(std::map<std::string, std::string> extra = {}, bool with_kubeadm = true) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string v = *e;
      auto eq = v.find('=');
      if (eq != std::string::npos) env[v.substr(0, eq)] = v.substr(eq + 1);
    }
    for (const char* drop : {"SHELLOPTS", "BASH_ENV", "ENV", "JOIN_POLL_INTERVAL", "JOIN_DEADLINE",
                             "JOIN_ATTEMPTS", "JOIN_CONFIG_DIR", "METADATA_URL", "KUBELET_KUBECONFIG"})
      env.erase(drop);
    const std::string path = env.count("PATH") ? env["PATH"] : "/usr/bin:/bin";
    env["PATH"] = (dir_ / (with_kubeadm ? "bin" : "nobin")).string() + ":" + path;
    env["METADATA_URL"] = metadata_.url();
    env["JOIN_POLL_INTERVAL"] = "0.02";
    env["JOIN_DEADLINE"] = "20";
    env["JOIN_CONFIG_DIR"] = (dir_ / "run").string();
    env["KUBELET_KUBECONFIG"] = kubeconfig().string();
    env["FAKE_KUBEADM_DIR"] = (dir_ / "kubeadm").string();
    for (auto& [k, v] : extra) env[k] = v;

    std::vector<std::string> argv = {"/bin/bash", std::string(TPU_SOURCE_DIR) + "/deploy/node-bootstrap/join.sh"};
    std::vector<std::string> envs;
    for (auto& [k, v] : env) envs.push_back(k + "=" + v);
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      FILE* o = std::fopen(out.c_str(), "w");
      FILE* e = std::fopen(err.c_str(), "w");
      if (!o || !e) _exit(127);
      dup2(fileno(o), 1);
      dup2(fileno(e), 2);
      std::vector<char*> a, en;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      for (auto& s : envs) en.push_back(s.data());
      en.push_back(nullptr);
      execve(a[0], a.data(), en.data());
      _exit(127);
    }
  }

  // The script's exit code; -1 if it is still running after `limit` (then killed).
  int Wait(std::chrono::milliseconds limit = 20s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  bool Running() {
    int status = 0;
    return pid_ > 0 && waitpid(pid_, &status, WNOHANG) == 0;
  }
  // Polls until `ready` holds (false after 20 s).
  template <typename F>
  bool WaitUntil(F ready) {
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!ready()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }

  fs::path kubeconfig() const { return dir_ / "etc" / "kubelet.conf"; }
  std::string Out() const { return Slurp(dir_ / "stdout") + Slurp(dir_ / "stderr"); }
  std::string Err() const { return Slurp(dir_ / "stderr"); }
  // The fake kubeadm's calls that were `join`s.
  std::vector<std::string> Joins() const {
    std::vector<std::string> joins;
    std::istringstream in(Slurp(dir_ / "kubeadm" / "argv"));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("join", 0) == 0) joins.push_back(line);
    return joins;
  }
  YAML::Node Config(int n) const { return YAML::LoadFile((dir_ / "kubeadm" / ("config." + std::to_string(n))).string()); }

  FakeMetadata metadata_;
  fs::path dir_;
  pid_t pid_ = -1;
};

// The whole pull: it polls while the keys are absent (also while only some are
// set), joins once all three are, with the token only in the 0600 config file.
TEST_F(JoinScriptTest, WaitsForTheKeysThenJoinsWithTheTokenOnlyInTheConfigFile) {
  metadata_.SetInstance();
  // SHELLOPTS=xtrace: a caller tracing the script must not trace the token out.
  Start({{"SHELLOPTS", "xtrace"}});
  ASSERT_TRUE(WaitUntil([&] { return metadata_.Hits("instance/attributes/kubeadm-join-token") >= 3; }));
  EXPECT_TRUE(Running());
  EXPECT_TRUE(Joins().empty());

  metadata_.Set("instance/attributes/kubeadm-join-token", kToken);
  metadata_.Set("instance/attributes/kubeadm-ca-hash", kHash);
  const int hits = metadata_.Hits("instance/attributes/kubeadm-control-plane-ip");
  ASSERT_TRUE(WaitUntil([&] { return metadata_.Hits("instance/attributes/kubeadm-control-plane-ip") >= hits + 3; }));
  EXPECT_TRUE(Running()) << "joined without the control plane's address";
  EXPECT_TRUE(Joins().empty());

  metadata_.Set("instance/attributes/kubeadm-control-plane-ip", "10.0.0.2:6443");
  ASSERT_EQ(Wait(), 0) << Out();

  const auto joins = Joins();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].rfind("join --config " + (dir_ / "run").string() + "/kubeadm-join.", 0), 0u) << joins[0];
  EXPECT_EQ(Slurp(dir_ / "kubeadm" / "argv").find(kTokenSecret), std::string::npos) << "the token was in kubeadm's argv";
  EXPECT_EQ(Slurp(dir_ / "kubeadm" / "mode.1"), "600\n");
  EXPECT_TRUE(fs::is_empty(dir_ / "run")) << "the JoinConfiguration was left behind";

  const YAML::Node c = Config(1);
  EXPECT_EQ(c["apiVersion"].as<std::string>(), "kubeadm.k8s.io/v1beta4");
  EXPECT_EQ(c["kind"].as<std::string>(), "JoinConfiguration");
  const YAML::Node bt = c["discovery"]["bootstrapToken"];
  EXPECT_EQ(bt["apiServerEndpoint"].as<std::string>(), "10.0.0.2:6443");
  EXPECT_EQ(bt["token"].as<std::string>(), kToken);
  ASSERT_EQ(bt["caCertHashes"].size(), 1u);
  EXPECT_EQ(bt["caCertHashes"][0].as<std::string>(), kHash);
  EXPECT_EQ(c["nodeRegistration"]["name"].as<std::string>(), "g1-abcd");
  std::map<std::string, std::string> kubelet_args;
  for (const auto& a : c["nodeRegistration"]["kubeletExtraArgs"])
    kubelet_args[a["name"].as<std::string>()] = a["value"].as<std::string>();
  EXPECT_EQ(kubelet_args["provider-id"], kProviderId);
  EXPECT_EQ(kubelet_args["node-labels"], kLabels);

  const std::string out = Out();
  EXPECT_EQ(out.find(kTokenSecret), std::string::npos) << "the token was printed:\n" << out;
  EXPECT_NE(out.find(kProviderId), std::string::npos) << out;
}

// kubeadm 1.29 and 1.30 read only v1beta3, where kubeletExtraArgs is a map;
// a control plane given without a port gets kubeadm's 6443.
TEST_F(JoinScriptTest, OlderKubeadmGetsV1beta3AndABareHostGets6443) {
  metadata_.SetInstance();
  metadata_.SetJoinKeys("10.0.0.2");
  Start({{"FAKE_KUBEADM_VERSION", "v1.29.4"}});
  ASSERT_EQ(Wait(), 0) << Out();
  const YAML::Node c = Config(1);
  EXPECT_EQ(c["apiVersion"].as<std::string>(), "kubeadm.k8s.io/v1beta3");
  EXPECT_EQ(c["discovery"]["bootstrapToken"]["apiServerEndpoint"].as<std::string>(), "10.0.0.2:6443");
  EXPECT_EQ(c["nodeRegistration"]["kubeletExtraArgs"]["provider-id"].as<std::string>(), kProviderId);
  EXPECT_EQ(c["nodeRegistration"]["kubeletExtraArgs"]["node-labels"].as<std::string>(), kLabels);
  // The template asked for 1.31: a warning, not a failure.
  EXPECT_NE(Err().find("warning: the template asks for Kubernetes 1.31"), std::string::npos) << Err();
}

// A template without kube-labels (or with an empty one) still joins: no
// node-labels flag, a warning, and no wait for a key that will never come.
TEST_F(JoinScriptTest, NoKubeLabelsJoinsWithoutNodeLabels) {
  metadata_.SetInstance();
  metadata_.SetJoinKeys();
  metadata_.Set("instance/attributes/kube-labels", "");
  Start();
  ASSERT_EQ(Wait(), 0) << Out();
  std::map<std::string, std::string> kubelet_args;
  for (const auto& a : Config(1)["nodeRegistration"]["kubeletExtraArgs"])
    kubelet_args[a["name"].as<std::string>()] = a["value"].as<std::string>();
  EXPECT_EQ(kubelet_args, (std::map<std::string, std::string>{{"provider-id", kProviderId}}));
  EXPECT_NE(Err().find("warning: no kube-labels"), std::string::npos) << Err();
}

// A reboot: kubeadm join ran before (its kubeconfig exists), so the script
// exits 0 at once, neither asking the metadata server nor joining again.
TEST_F(JoinScriptTest, AJoinedNodeDoesNotJoinAgain) {
  metadata_.SetInstance();
  metadata_.SetJoinKeys();
  Start();
  ASSERT_EQ(Wait(), 0) << Out();
  ASSERT_EQ(Joins().size(), 1u);
  ASSERT_TRUE(fs::exists(kubeconfig()));

  const int hits = metadata_.Hits("instance/name");
  Start();
  ASSERT_EQ(Wait(), 0) << Out();
  EXPECT_EQ(Joins().size(), 1u);
  EXPECT_EQ(metadata_.Hits("instance/name"), hits);
  EXPECT_NE(Err().find("already joined"), std::string::npos) << Err();
}

TEST_F(JoinScriptTest, FailsClearlyWithoutKubeadm) {
  if (std::system("command -v kubeadm >/dev/null 2>&1") == 0) GTEST_SKIP() << "a real kubeadm is on PATH";
  metadata_.SetInstance();
  metadata_.SetJoinKeys();
  Start({}, /*with_kubeadm=*/false);
  EXPECT_EQ(Wait(), 1) << Out();
  EXPECT_NE(Err().find("kubeadm is not on PATH"), std::string::npos) << Err();
  EXPECT_NE(Err().find("the VM image must carry kubeadm"), std::string::npos) << Err();
}

TEST_F(JoinScriptTest, FailsAfterItsDeadline) {
  metadata_.SetInstance();
  const auto start = std::chrono::steady_clock::now();
  Start({{"JOIN_DEADLINE", "0.4"}});
  EXPECT_EQ(Wait(), 1) << Out();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  // At least one look (how many fit in 0.4 s depends on the machine's load).
  EXPECT_GE(metadata_.Hits("instance/attributes/kubeadm-join-token"), 1);
  EXPECT_TRUE(Joins().empty());
  EXPECT_NE(Err().find("not all set (well-formed) within 0.4s"), std::string::npos) << Err();
}

// A malformed token is waited past (the daemon may write a new one), and never printed.
TEST_F(JoinScriptTest, AMalformedTokenIsNotUsedNorPrinted) {
  metadata_.SetInstance();
  metadata_.SetJoinKeys();
  metadata_.Set("instance/attributes/kubeadm-join-token", "Secret-But-Malformed");
  Start({{"JOIN_DEADLINE", "0.4"}});
  EXPECT_EQ(Wait(), 1) << Out();
  EXPECT_TRUE(Joins().empty());
  EXPECT_NE(Err().find("kubeadm-join-token is malformed"), std::string::npos) << Err();
  EXPECT_EQ(Out().find("Secret-But-Malformed"), std::string::npos) << Out();
}

// A failed join is reset and tried again with fresh credentials, up to JOIN_ATTEMPTS.
TEST_F(JoinScriptTest, AFailedJoinIsResetAndRetriedThenFails) {
  metadata_.SetInstance();
  metadata_.SetJoinKeys();
  Start({{"FAKE_KUBEADM_JOIN_RC", "1"}, {"JOIN_ATTEMPTS", "2"}});
  EXPECT_EQ(Wait(), 1) << Out();
  EXPECT_EQ(Joins().size(), 2u);
  const std::string argv = Slurp(dir_ / "kubeadm" / "argv");
  EXPECT_NE(argv.find("reset --force"), std::string::npos) << argv;
  EXPECT_NE(Err().find("kubeadm join failed 2 times"), std::string::npos) << Err();
  EXPECT_TRUE(fs::is_empty(dir_ / "run"));
}

}  // namespace
