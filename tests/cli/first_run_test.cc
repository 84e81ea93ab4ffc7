// What a new user meets first, through the real binary: the error when there
// are no credentials (the three places searched, and `--cloud sim`), the
// examples that end every command's --help, and shell completion scripts that
// a real bash runs.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace tpu::cli {
namespace {

// Runs a shell command; its exit code, stdout and stderr in `out`.
int Shell(const std::string& command, std::string* out) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::string kBinary = TPU_BINARY;
const std::string kExample = std::string(TPU_SOURCE_DIR) + "/example-project";

TEST(FirstRunTest, NoCredentialsNamesTheThreePlacesAndPointsToTheEmulator) {
  std::string out;
  // No variable, an empty home, and a metadata server nobody listens on.
  int code = Shell("env -u GOOGLE_APPLICATION_CREDENTIALS -u CLOUDSDK_CONFIG HOME=/nonexistent "
                   "GCE_METADATA_HOST=127.0.0.1:9 " + kBinary + " plan --repo " + kExample,
                   &out);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("error: no Google Cloud credentials found. Looked in, in order:\n"
                     "  (1) GOOGLE_APPLICATION_CREDENTIALS: unset\n"
                     "  (2) the gcloud application-default credentials file "
                     "/nonexistent/.config/gcloud/application_default_credentials.json: absent "
                     "(`gcloud auth application-default login` writes it)\n"
                     "  (3) the GCE metadata server at 127.0.0.1:9: unreachable ("),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("To try tpu-provisioner without Google Cloud, run it against its embedded "
                     "emulator with --cloud sim, for example:\n"
                     "  tpu-provisioner plan --repo example-project --cloud sim\n"),
            std::string::npos)
      << out;
}

TEST(FirstRunTest, EveryCommandsHelpEndsWithExamples) {
  for (const char* command : {"", "catalog", "validate", "plan", "apply", "watch", "sim", "export", "completion"}) {
    std::string out;
    EXPECT_EQ(Shell(kBinary + " " + command + " --help", &out), 0) << command;
    auto at = out.rfind("\nExamples:\n");
    ASSERT_NE(at, std::string::npos) << command << ":\n" << out;
    std::string examples = out.substr(at + 11);
    int lines = 0;
    for (size_t p = 0; (p = examples.find("  tpu-provisioner ", p)) != std::string::npos; ++p) ++lines;
    EXPECT_GE(lines, 2) << command << ":\n" << examples;
    EXPECT_LE(lines, 3) << command << ":\n" << examples;
  }
}

// Completion as bash runs it: the script is sourced and asked what it offers.
std::string Complete(const std::string& words, int cword) {
  std::string out;
  std::string script = "source <(" + kBinary + " completion bash); COMP_WORDS=(" + words +
                       "); COMP_CWORD=" + std::to_string(cword) +
                       "; _tpu_provisioner; echo \"${COMPREPLY[*]}\"";
  EXPECT_EQ(Shell("bash -c '" + script + "'", &out), 0) << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(FirstRunTest, BashCompletionOffersCommandsFlagsAndValues) {
  EXPECT_EQ(Complete("tpu-provisioner ap", 1), "apply");
  EXPECT_EQ(Complete("tpu-provisioner plan --summ", 2), "--summary-over");
  EXPECT_EQ(Complete("tpu-provisioner apply --auto", 2), "--auto-approve");
  EXPECT_EQ(Complete("tpu-provisioner plan -o \"\"", 3), "text json markdown");
  EXPECT_EQ(Complete("tpu-provisioner validate -o \"\"", 3), "text json");
  EXPECT_EQ(Complete("tpu-provisioner watch --log-format j", 3), "json");
  std::string out;
  EXPECT_NE(Shell(kBinary + " completion fish", &out), 0) << "only bash and zsh";
}

TEST(FirstRunTest, ZshCompletionIsValidZsh) {
  std::string out;
  if (Shell("command -v zsh", &out) != 0) GTEST_SKIP() << "zsh is not installed";
  EXPECT_EQ(Shell(kBinary + " completion zsh > /tmp/_tpu-provisioner-$$ && zsh -n /tmp/_tpu-provisioner-$$; "
                  "r=$?; rm -f /tmp/_tpu-provisioner-$$; exit $r", &out), 0) << out;
  EXPECT_EQ(Shell(kBinary + " completion zsh | grep -c \"'--summary-over\\[\"", &out), 0) << out;
}

}  // namespace
}  // namespace tpu::cli
