// Catalog: every generation's valid and invalid shapes, node counts as docs/architecture.md ("The TPU catalog") states them.
#include "catalog/catalog.h"

#include <gtest/gtest.h>

namespace tpu::catalog {
namespace {

struct ShapeCase {
  const char* accelerator;
  const char* topology;
  const char* machine_type;  // "" = derived
  const char* want_machine_type;
  int want_chips;
  int want_vms;
  Placement want_placement;
};

class ValidShape : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(ValidShape, Resolves) {
  const ShapeCase& c = GetParam();
  auto r = ResolveShape(c.accelerator, c.topology, c.machine_type);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->machine_type.name, c.want_machine_type);
  EXPECT_EQ(r->chips, c.want_chips);
  EXPECT_EQ(r->vms, c.want_vms);
  EXPECT_EQ(r->multi_host, c.want_vms > 1);
  EXPECT_EQ(r->placement, c.want_placement);
}

INSTANTIATE_TEST_SUITE_P(
    Catalog, ValidShape,
    ::testing::Values(
        // v4: 3-D, 4 chips per VM.
        ShapeCase{"tpu-v4-podslice", "2x2x1", "", "ct4p-hightpu-4t", 4, 1, Placement::kNone},
        ShapeCase{"v4", "2x2x2", "", "ct4p-hightpu-4t", 8, 2, Placement::kCompact},
        ShapeCase{"v4", "2x2x4", "", "ct4p-hightpu-4t", 16, 4, Placement::kCompact},
        ShapeCase{"v4", "2x4x4", "ct4p-hightpu-4t", "ct4p-hightpu-4t", 32, 8, Placement::kCompact},
        ShapeCase{"v4", "4x4x4", "", "ct4p-hightpu-4t", 64, 16, Placement::kCompact},
        ShapeCase{"v4", "8x16x32", "", "ct4p-hightpu-4t", 4096, 1024, Placement::kCompact},
        // v5e: the explicit 2-D list.
        ShapeCase{"tpu-v5-lite-podslice", "1x1", "", "ct5lp-hightpu-1t", 1, 1, Placement::kNone},
        ShapeCase{"v5e", "2x2", "", "ct5lp-hightpu-4t", 4, 1, Placement::kNone},
        ShapeCase{"v5e", "2x4", "", "ct5lp-hightpu-8t", 8, 1, Placement::kNone},
        ShapeCase{"v5e", "2x4", "ct5lp-hightpu-4t", "ct5lp-hightpu-4t", 8, 2, Placement::kCompact},
        ShapeCase{"v5e", "4x4", "", "ct5lp-hightpu-4t", 16, 4, Placement::kCompact},
        ShapeCase{"v5e", "4x8", "", "ct5lp-hightpu-4t", 32, 8, Placement::kCompact},
        ShapeCase{"v5e", "8x8", "", "ct5lp-hightpu-4t", 64, 16, Placement::kCompact},
        ShapeCase{"v5e", "8x16", "", "ct5lp-hightpu-4t", 128, 32, Placement::kCompact},
        ShapeCase{"v5e", "16x16", "", "ct5lp-hightpu-4t", 256, 64, Placement::kCompact},
        // v5p: 3-D, A≤B≤C, ≤ 6144 chips.
        ShapeCase{"tpu-v5p-slice", "2x2x1", "", "ct5p-hightpu-4t", 4, 1, Placement::kNone},
        ShapeCase{"v5p", "2x2x2", "", "ct5p-hightpu-4t", 8, 2, Placement::kCompact},
        ShapeCase{"v5p", "4x4x8", "", "ct5p-hightpu-4t", 128, 32, Placement::kCompact},
        ShapeCase{"v5p", "16x16x24", "", "ct5p-hightpu-4t", 6144, 1536, Placement::kCompact},
        // v6e.
        ShapeCase{"tpu-v6e-slice", "1x1", "", "ct6e-standard-1t", 1, 1, Placement::kNone},
        ShapeCase{"v6e", "2x2", "ct6e-standard-4t", "ct6e-standard-4t", 4, 1, Placement::kNone},
        ShapeCase{"v6e", "2x4", "ct6e-standard-8t", "ct6e-standard-8t", 8, 1, Placement::kNone},
        ShapeCase{"v6e", "2x4", "ct6e-standard-4t", "ct6e-standard-4t", 8, 2, Placement::kCompact},
        ShapeCase{"v6e", "16x16", "", "ct6e-standard-4t", 256, 64, Placement::kCompact},
        // v7x: workload policy for multi-host, 1t for 1x1x1.
        ShapeCase{"tpu7x", "1x1x1", "", "tpu7x-standard-1t", 1, 1, Placement::kNone},
        ShapeCase{"v7x", "2x2x1", "", "tpu7x-standard-4t", 4, 1, Placement::kNone},
        ShapeCase{"v7x", "2x2x2", "", "tpu7x-standard-4t", 8, 2, Placement::kWorkloadPolicy},
        ShapeCase{"v7x", "4x4x4", "", "tpu7x-standard-4t", 64, 16, Placement::kWorkloadPolicy},
        ShapeCase{"v7x", "12x24x32", "", "tpu7x-standard-4t", 9216, 2304,
                  Placement::kWorkloadPolicy}));

struct BadCase {
  const char* accelerator;
  const char* topology;
  const char* machine_type;
  const char* want_error;
};

class InvalidShape : public ::testing::TestWithParam<BadCase> {};

TEST_P(InvalidShape, FailsWithMessage) {
  const BadCase& c = GetParam();
  auto r = ResolveShape(c.accelerator, c.topology, c.machine_type);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), c.want_error);
}

INSTANTIATE_TEST_SUITE_P(
    Catalog, InvalidShape,
    ::testing::Values(
        BadCase{"tpu-v9-slice", "2x2", "",
                "unknown accelerator \"tpu-v9-slice\" (expected one of tpu-v4-podslice, "
                "tpu-v5-lite-podslice, tpu-v5p-slice, tpu-v6e-slice, tpu7x, or v4, v5e, v5p, "
                "v6e, v7x)"},
        BadCase{"v4", "4x4", "",
                "topology \"4x4\" is not valid for v4 (expected 3-D: 2x2x1, 2x2x2, 2x2x4, "
                "2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 4096 chips)"},
        BadCase{"v4", "4x4x6", "",
                "topology \"4x4x6\" is not valid for v4 (expected 3-D: 2x2x1, 2x2x2, 2x2x4, "
                "2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 4096 chips)"},
        BadCase{"v4", "16x16x32", "",
                "topology \"16x16x32\" is not valid for v4 (expected 3-D: 2x2x1, 2x2x2, 2x2x4, "
                "2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 4096 chips)"},
        BadCase{"v5p", "8x4x4", "",
                "topology \"8x4x4\" is not valid for v5p (expected 3-D: 2x2x1, 2x2x2, 2x2x4, "
                "2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 6144 chips)"},
        BadCase{"v5e", "2x8", "",
                "topology \"2x8\" is not valid for v5e (expected 2-D: 1x1, 2x2, 2x4, 4x4, 4x8, "
                "8x8, 8x16, 16x16)"},
        BadCase{"v6e", "2x2x1", "",
                "topology \"2x2x1\" is not valid for v6e (expected 2-D: 1x1, 2x2, 2x4, 4x4, "
                "4x8, 8x8, 8x16, 16x16)"},
        BadCase{"v6e", "banana", "",
                "topology \"banana\" is not valid for v6e (expected 2-D: 1x1, 2x2, 2x4, 4x4, "
                "4x8, 8x8, 8x16, 16x16)"},
        BadCase{"v7x", "24x24x24", "",
                "topology \"24x24x24\" is not valid for v7x (expected 3-D: 1x1x1, 2x2x1, "
                "2x2x2, 2x2x4, 2x4x4, or AxBxC with each a multiple of 4, A≤B≤C, ≤ 9216 chips)"},
        BadCase{"v5e", "4x4", "ct5lp-hightpu-8t",
                "machine type \"ct5lp-hightpu-8t\" cannot form topology 4x4 (expected "
                "ct5lp-hightpu-4t)"},
        BadCase{"v5e", "1x1", "ct5lp-hightpu-4t",
                "machine type \"ct5lp-hightpu-4t\" cannot form topology 1x1 (expected "
                "ct5lp-hightpu-1t)"},
        BadCase{"v6e", "2x4", "ct6e-standard-1t",
                "machine type \"ct6e-standard-1t\" cannot form topology 2x4 (expected "
                "ct6e-standard-4t or ct6e-standard-8t)"},
        BadCase{"v5p", "2x2x2", "ct4p-hightpu-4t",
                "machine type \"ct4p-hightpu-4t\" is not a v5p machine type (expected "
                "ct5p-hightpu-4t)"}));

TEST(Catalog, AliasesNameTheSameGeneration) {
  EXPECT_EQ(FindGeneration("v5e"), FindGeneration("tpu-v5-lite-podslice"));
  EXPECT_EQ(FindGeneration("v7x"), FindGeneration("tpu7x"));
  EXPECT_EQ(FindGeneration("tpu-v6e-slice")->name, "v6e");
  EXPECT_EQ(FindGeneration("nope"), nullptr);
}

TEST(Catalog, ParseTopologyRejectsMalformed) {
  EXPECT_EQ(ParseTopology("2x4"), (std::vector<int>{2, 4}));
  EXPECT_EQ(ParseTopology("2x2x4"), (std::vector<int>{2, 2, 4}));
  EXPECT_TRUE(ParseTopology("").empty());
  EXPECT_TRUE(ParseTopology("2").empty());
  EXPECT_TRUE(ParseTopology("2x").empty());
  EXPECT_TRUE(ParseTopology("x2").empty());
  EXPECT_TRUE(ParseTopology("0x2").empty());
  EXPECT_TRUE(ParseTopology("2x2x2x2").empty());
  EXPECT_TRUE(ParseTopology("-2x2").empty());
  EXPECT_TRUE(ParseTopology("99999999999x2").empty());
}

TEST(Catalog, MachineTypeLookups) {
  EXPECT_EQ(ChipsPerVm("ct5lp-hightpu-8t"), 8);
  EXPECT_EQ(ChipsPerVm("tpu7x-standard-1t"), 1);
  EXPECT_EQ(ChipsPerVm("n2-standard-8"), 0);
  EXPECT_EQ(GenerationOfMachineType("ct5p-hightpu-4t")->name, "v5p");
  EXPECT_EQ(GenerationOfMachineType("e2-small"), nullptr);
}

TEST(Catalog, SingleHostTopologyIsOneVmsChipsInTheGenerationsDimensions) {
  EXPECT_EQ(SingleHostTopology("ct6e-standard-1t"), "1x1");
  EXPECT_EQ(SingleHostTopology("ct6e-standard-4t"), "2x2");
  EXPECT_EQ(SingleHostTopology("ct5lp-hightpu-8t"), "2x4");
  EXPECT_EQ(SingleHostTopology("ct5p-hightpu-4t"), "2x2x1");
  EXPECT_EQ(SingleHostTopology("tpu7x-standard-1t"), "1x1x1");
  EXPECT_EQ(SingleHostTopology("n2-standard-8"), "");
  // Each is a topology the catalog resolves to one VM of that machine type.
  for (const char* mt : {"ct6e-standard-1t", "ct6e-standard-4t", "ct5lp-hightpu-8t", "ct5p-hightpu-4t"}) {
    auto shape = ResolveShape(GenerationOfMachineType(mt)->accelerator, SingleHostTopology(mt), mt);
    ASSERT_TRUE(shape.ok()) << mt << ": " << shape.status().ToString();
    EXPECT_EQ(shape->vms, 1) << mt;
  }
}

}  // namespace
}  // namespace tpu::catalog
