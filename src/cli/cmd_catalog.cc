// `tpu-provisioner catalog [--accelerator GEN]`: the TPU catalog as a table, or
// every valid shape of one generation with its machine type, VMs and placement.
#include <cstdio>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "cli/commands.h"

namespace tpu::cli {
namespace {

const char* PlacementName(catalog::Placement p) {
  switch (p) {
    case catalog::Placement::kNone: return "none (single-host)";
    case catalog::Placement::kCompact: return "COMPACT + tpuTopology";
    case catalog::Placement::kWorkloadPolicy: return "workload policy (policyName)";
  }
  return "";
}

void PrintTable() {
  std::printf("%-4s %-21s %-9s %-4s %-10s %s\n", "GEN", "ACCELERATOR", "ALIASES", "DIMS",
              "MAX CHIPS", "MACHINE TYPES (chips/VM)");
  for (const auto& g : catalog::Generations()) {
    std::string types;
    for (const auto& m : g.machine_types)
      types += (types.empty() ? "" : ", ") + m.name + " (" + std::to_string(m.chips_per_vm) + ")";
    std::printf("%-4s %-21s %-9s %-4d %-10d %s\n", g.name.c_str(), g.accelerator.c_str(),
                g.aliases.front().c_str(), g.dims, g.max_chips, types.c_str());
    std::printf("     topologies: %s\n", catalog::DescribeTopologies(g).c_str());
  }
}

// Every topology a generation accepts: its listed shapes, then for 3-D ones the
// sorted multiples of 4 up to the chip limit.
std::vector<std::string> AllTopologies(const catalog::Generation& g) {
  std::vector<std::string> out = g.topologies;
  if (g.dims == 3) {
    for (int a = 4; a * 16 <= g.max_chips; a += 4)
      for (int b = a; a * b * 4 <= g.max_chips; b += 4)
        for (int c = b; a * b * c <= g.max_chips; c += 4)
          out.push_back(std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c));
  }
  return out;
}

int PrintGeneration(const std::string& name) {
  const catalog::Generation* g = catalog::FindGeneration(name);
  if (!g) {
    std::fprintf(stderr, "error: unknown accelerator \"%s\"\n", name.c_str());
    return 1;
  }
  std::printf("%s (%s), %d-D, up to %d chips per slice\n", g->name.c_str(),
              g->accelerator.c_str(), g->dims, g->max_chips);
  std::printf("%-10s %-20s %6s %5s  %-11s %s\n", "TOPOLOGY", "MACHINE TYPE", "CHIPS", "VMS",
              "HOSTS", "PLACEMENT");
  for (const auto& topo : AllTopologies(*g)) {
    for (const auto& m : g->machine_types) {
      auto shape = catalog::ResolveShape(g->accelerator, topo, m.name);
      if (!shape.ok()) continue;
      std::printf("%-10s %-20s %6d %5d  %-11s %s\n", topo.c_str(), m.name.c_str(), shape->chips,
                  shape->vms, shape->multi_host ? "multi-host" : "single-host",
                  PlacementName(shape->placement));
    }
  }
  return 0;
}

}  // namespace

void AddCatalogCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("catalog", "Print the TPU catalog: generations, machine types, topologies");
  cmd->footer("Examples:\n"
              "  tpu-provisioner catalog                      # every generation\n"
              "  tpu-provisioner catalog --accelerator v6e    # every valid v6e topology, machine type, chips and VMs");
  auto accelerator = std::make_shared<std::string>();
  cmd->add_option("--accelerator", *accelerator,
                  "One generation (label or alias: v4, v5e, v5p, v6e, v7x) with every valid shape");
  cmd->callback([accelerator, &ctx] {
    if (accelerator->empty()) {
      PrintTable();
      ctx.exit_code = 0;
    } else {
      ctx.exit_code = PrintGeneration(*accelerator);
    }
  });
}

}  // namespace tpu::cli
