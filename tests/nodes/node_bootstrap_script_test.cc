// generated/node_bootstrap_script.h is deploy/node-bootstrap/join.sh, byte for
// byte: what the plan puts into `startup-script` is the script the tests run.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "node_bootstrap_script.h"

namespace {

TEST(NodeBootstrapScriptTest, HeaderEqualsTheScript) {
  std::ifstream in(std::string(TPU_SOURCE_DIR) + "/deploy/node-bootstrap/join.sh", std::ios::binary);
  ASSERT_TRUE(in);
  std::stringstream script;
  script << in.rdbuf();
  EXPECT_EQ(tpu::nodes::kNodeBootstrapScript, script.str());
  EXPECT_EQ(tpu::nodes::kNodeBootstrapScript.substr(0, 2), "#!");
}

}  // namespace
