// The main of every test binary: GoogleTest with quiet logging unless
// TPU_TEST_LOG is set, so failures are not buried under log lines.
#include <cstdlib>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  spdlog::set_level(std::getenv("TPU_TEST_LOG") ? spdlog::level::debug : spdlog::level::off);
  return RUN_ALL_TESTS();
}
