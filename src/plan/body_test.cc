// Body<T> behaves as the std::optional it replaced in Action: empty by
// default, copies deep, moves, compares by value, and reads as the optional
// callers assign from.
#include "plan/body.h"

#include <gtest/gtest.h>

#include <string>

namespace tpu::plan {
namespace {

struct Thing {
  std::string name;
  bool operator==(const Thing&) const = default;
};

TEST(BodyTest, ActsAsAnOptional) {
  Body<Thing> b;
  EXPECT_FALSE(b);
  EXPECT_FALSE(b.has_value());
  EXPECT_TRUE(b == std::nullopt);
  EXPECT_THROW(b.value(), std::bad_optional_access);
  b = Thing{"a"};
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name, "a");
  EXPECT_EQ((*b).name, "a");

  Body<Thing> copy = b;  // deep: changing one leaves the other
  copy->name = "b";
  EXPECT_EQ(b->name, "a");
  EXPECT_FALSE(copy == b);
  copy = b;
  EXPECT_TRUE(copy == b);

  Body<Thing> moved = std::move(copy);
  EXPECT_EQ(moved->name, "a");

  std::optional<Thing> none;
  moved = none;
  EXPECT_FALSE(moved);
  moved = std::optional<Thing>(Thing{"c"});
  EXPECT_EQ(moved.value().name, "c");
  moved.emplace(Thing{"d"});
  EXPECT_EQ(moved->name, "d");
  moved.reset();
  EXPECT_TRUE(moved == Body<Thing>());
  moved = std::nullopt;
  EXPECT_FALSE(moved);
}

}  // namespace
}  // namespace tpu::plan
