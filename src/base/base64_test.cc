#include "base/base64.h"

#include <gtest/gtest.h>

#include <vector>

namespace tpu {
namespace {

TEST(Base64, RoundTripsEveryPaddingLength) {
  // RFC 4648 §10's test vectors.
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  for (const std::string& s : std::vector<std::string>{"", "f", "fooba", "foobar", std::string("\0\xff\x10", 3)})
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
}

TEST(Base64, DecodeSkipsLineBreaksAndRejectsOtherCharacters) {
  EXPECT_EQ(Base64Decode("Zm9v\nYmFy\n"), "foobar");
  EXPECT_EQ(Base64Decode("Zm9v*"), std::nullopt);
}

}  // namespace
}  // namespace tpu
