// deploy/ci/github-actions-plan.yml works: its own `run:` scripts (the plan
// step, the merged-tree check and the apply step) run here with bash, as the
// runner would, on a git checkout of example-project/, against the cloud
// emulator (the gcloud endpoint variables) with the access token in a file, as
// Workload Identity Federation's token reaches them. The pull request's plan
// lands in the job summary as Markdown, the saved plan is applied on merge,
// and the next plan finds no changes.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "sim/cloud_emulator.h"

namespace tpu::cli {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Shell(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  out->clear();
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int status = p ? pclose(p) : -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The `run:` script of the step named `name` in job `job`.
std::string StepScript(const YAML::Node& wf, const std::string& job, const std::string& name) {
  for (const auto& step : wf["jobs"][job]["steps"])
    if (step["name"] && step["name"].as<std::string>() == name) return step["run"].as<std::string>();
  ADD_FAILURE() << "no step " << name << " in job " << job;
  return "";
}

class CiWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ci-workflow-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    sim::CloudEmulatorOptions o;
    o.op_latency_ms = {{"default", 0}};
    emu_ = std::make_unique<sim::CloudEmulator>(o);
    ASSERT_TRUE(emu_->Start().ok());
    ASSERT_TRUE(emu_->EnsureCluster("ml-research-prod", "us-central1", "train-central1").ok());
    ASSERT_TRUE(emu_->EnsureCluster("ml-serving-dev", "us-west4-a", "serve-west4").ok());
    ASSERT_TRUE(emu_->EnsureCluster("ml-serving-dev", "us-central1-c", "gce-tpu7x").ok());
    repo_ = dir_ / "repo";
    fs::copy(fs::path(TPU_SOURCE_DIR) / "example-project", repo_, fs::copy_options::recursive);
    std::string out;
    ASSERT_EQ(Shell("cd " + repo_.string() +
                        " && git init -q && git -c user.name=ci -c user.email=ci@example.com add -A && "
                        "git -c user.name=ci -c user.email=ci@example.com commit -qm capacity",
                    &out),
              0)
        << out;
    fs::create_directories(dir_ / "runner");
    workflow_ = YAML::LoadFile(std::string(TPU_SOURCE_DIR) + "/deploy/ci/github-actions-plan.yml");
  }
  void TearDown() override {
    emu_->Stop();
    fs::remove_all(dir_);
  }

  // Runs a step's script in the checkout with the runner's variables.
  int Step(const std::string& job, const std::string& name, std::string* out) {
    fs::path script = dir_ / "step.sh";
    std::ofstream(script) << StepScript(workflow_, job, name);
    fs::remove(dir_ / "output");
    std::string env = "env -u GOOGLE_APPLICATION_CREDENTIALS HOME=" + dir_.string() +
                      " ACCESS_TOKEN=ya29.from-workload-identity-federation RUNNER_TEMP=" + (dir_ / "runner").string() +
                      " GITHUB_STEP_SUMMARY=" + (dir_ / "summary.md").string() +
                      " GITHUB_OUTPUT=" + (dir_ / "output").string() +
                      " PATH=" + fs::path(TPU_BINARY).parent_path().string() + ":$PATH" +
                      " CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER=" + emu_->endpoint() + "/" +
                      " CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE=" + emu_->endpoint() + "/";
    return Shell("cd " + repo_.string() + " && " + env + " bash -e " + script.string(), out);
  }

  fs::path dir_, repo_;
  YAML::Node workflow_;
  std::unique_ptr<sim::CloudEmulator> emu_;
};

TEST_F(CiWorkflowTest, PlanOnThePullRequestApplyOnMergeThenNoChanges) {
  ASSERT_TRUE(workflow_["jobs"]["plan"]);
  ASSERT_TRUE(workflow_["jobs"]["apply"]);
  std::string out;
  ASSERT_EQ(Step("plan", "Plan", &out), 0) << out;
  EXPECT_EQ(Read(dir_ / "output"), "exitcode=2\n");  // changes to apply
  std::string summary = Read(dir_ / "summary.md");
  EXPECT_EQ(summary.rfind("### TPU capacity plan\n", 0), 0u) << summary;
  EXPECT_NE(summary.find("**Plan: "), std::string::npos) << summary;
  EXPECT_LE(summary.size(), 65000u);
  EXPECT_TRUE(fs::exists(repo_ / "plan-out/tpu.plan"));
  EXPECT_FALSE(fs::exists(dir_ / "runner/token"));  // the token file is gone after the step
  EXPECT_EQ(emu_->counters().mutating_calls, 0);

  // On merge: the merged tree is the planned one, and the saved plan is applied.
  ASSERT_EQ(Step("apply", "The merged tree is the planned tree", &out), 0) << out;
  ASSERT_EQ(Step("apply", "Apply the saved plan", &out), 0) << out;
  EXPECT_GT(emu_->counters().mutating_calls, 0);

  fs::remove(dir_ / "summary.md");
  ASSERT_EQ(Step("plan", "Plan", &out), 0) << out;
  EXPECT_EQ(Read(dir_ / "output"), "exitcode=0\n");
  EXPECT_NE(Read(dir_ / "summary.md").find("**No changes.**"), std::string::npos) << Read(dir_ / "summary.md");
}

TEST_F(CiWorkflowTest, AMergeThatOutranThePlanIsRefused) {
  std::string out;
  ASSERT_EQ(Step("plan", "Plan", &out), 0) << out;
  ASSERT_EQ(Shell("cd " + repo_.string() + " && echo '# note' >> deploy/ml-serving-dev/serve-west4/cluster.yaml && "
                  "git -c user.name=ci -c user.email=ci@example.com commit -qam moved",
                  &out),
            0);
  EXPECT_EQ(Step("apply", "The merged tree is the planned tree", &out), 1);
  EXPECT_NE(out.find("main moved between the plan and the merge"), std::string::npos) << out;
}

}  // namespace
}  // namespace tpu::cli
