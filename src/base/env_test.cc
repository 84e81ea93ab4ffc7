// The environment seam: the machine's Env reads real files and variables and
// tells a missing file from an unreadable one; a FakeEnv moves time only when
// told or slept, and its files shadow the disk.
#include "base/env.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "base/fake_env.h"

namespace tpu {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/env-test-" + std::to_string(::getpid()) + "-" + name;
}

TEST(EnvTest, ReadsAWholeFile) {
  const std::string path = TempPath("whole");
  std::ofstream(path, std::ios::binary) << std::string("a\0b\n", 4);
  auto text = Env::Default().ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, std::string("a\0b\n", 4));
  ::unlink(path.c_str());
}

TEST(EnvTest, MissingIsNotFoundAndUnreadableIsAnIoError) {
  auto missing = Env::Default().ReadFile(TempPath("nope"));
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("env-test-"), std::string::npos) << "names the path";
  // A directory opens but cannot be read as a file.
  auto directory = Env::Default().ReadFile(::testing::TempDir());
  EXPECT_EQ(directory.status().code(), Status::Code::kIoError) << directory.status().ToString();
}

TEST(EnvTest, ReadsTheProcessEnvironment) {
  ::setenv("TPU_ENV_TEST_VAR", "value", 1);
  EXPECT_EQ(Env::Default().Var("TPU_ENV_TEST_VAR"), "value");
  ::unsetenv("TPU_ENV_TEST_VAR");
  EXPECT_EQ(Env::Default().Var("TPU_ENV_TEST_VAR"), std::nullopt);
}

TEST(FakeEnvTest, TimeMovesOnlyWhenToldOrSlept) {
  FakeEnv env;
  const SteadyTime t0 = env.Now();
  const WallTime w0 = env.WallNow();
  EXPECT_EQ(env.Now(), t0);
  env.SleepFor(std::chrono::seconds(3));
  env.Advance(std::chrono::seconds(2));
  EXPECT_EQ(env.Now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(env.WallNow() - w0, std::chrono::seconds(5));
  EXPECT_EQ(env.slept(), std::chrono::seconds(3));
}

TEST(FakeEnvTest, FilesShadowTheDiskAndVariablesComeFromTheMap) {
  const std::string path = TempPath("shadowed");
  std::ofstream(path) << "on disk";
  FakeEnv env({{"HOME", "/home/test"}});
  EXPECT_EQ(*env.ReadFile(path), "on disk");
  env.SetFile(path, "faked");
  EXPECT_EQ(*env.ReadFile(path), "faked");
  EXPECT_EQ(env.Var("HOME"), "/home/test");
  ::setenv("TPU_ENV_TEST_VAR", "real", 1);
  EXPECT_EQ(env.Var("TPU_ENV_TEST_VAR"), std::nullopt) << "the process environment is not read";
  ::unsetenv("TPU_ENV_TEST_VAR");
  ::unlink(path.c_str());
}

TEST(TrimSpaceTest, DropsSurroundingWhitespaceOnly) {
  EXPECT_EQ(TrimSpace("  a b\r\n"), "a b");
  EXPECT_EQ(TrimSpace("\t\n"), "");
  EXPECT_EQ(TrimSpace("x"), "x");
}

}  // namespace
}  // namespace tpu
