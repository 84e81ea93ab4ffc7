// The catalog's data and the topology rules of docs/architecture.md, "The TPU catalog".
#include "catalog/catalog.h"

#include <algorithm>
#include <charconv>

namespace tpu::catalog {
namespace {

// Shapes every 3-D generation accepts below the "multiples of 4" rule.
const std::vector<std::string> kSmall3d = {"2x2x1", "2x2x2", "2x2x4", "2x4x4"};

std::vector<Generation> MakeGenerations() {
  std::vector<Generation> g;
  g.push_back({"v4", "tpu-v4-podslice", {"v4", "tpu-v4"},
               {{"ct4p-hightpu-4t", 4}}, 3, 4096,
               MultiHostPlacement::kCompactTopology, kSmall3d, "tpu-v4"});
  g.push_back({"v5e", "tpu-v5-lite-podslice", {"v5e", "v5litepod", "tpu-v5e"},
               {{"ct5lp-hightpu-1t", 1}, {"ct5lp-hightpu-4t", 4}, {"ct5lp-hightpu-8t", 8}},
               2, 256, MultiHostPlacement::kCompactTopology,
               {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}, "tpu-v5e"});
  g.push_back({"v5p", "tpu-v5p-slice", {"v5p", "tpu-v5p"},
               {{"ct5p-hightpu-4t", 4}}, 3, 6144,
               MultiHostPlacement::kCompactTopology, kSmall3d, "tpu-v5p"});
  g.push_back({"v6e", "tpu-v6e-slice", {"v6e", "tpu-v6e"},
               {{"ct6e-standard-1t", 1}, {"ct6e-standard-4t", 4}, {"ct6e-standard-8t", 8}},
               2, 256, MultiHostPlacement::kCompactTopology,
               {"1x1", "2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"}, "tpu-v6e"});
  std::vector<std::string> v7 = {"1x1x1"};
  v7.insert(v7.end(), kSmall3d.begin(), kSmall3d.end());
  g.push_back({"v7x", "tpu7x", {"v7x", "tpu-v7x", "v7"},
               {{"tpu7x-standard-1t", 1}, {"tpu7x-standard-4t", 4}}, 3, 9216,
               MultiHostPlacement::kWorkloadPolicy, v7, "tpu7x"});
  return g;
}

int Product(const std::vector<int>& d) {
  long p = 1;
  for (int x : d) {
    p *= x;
    if (p > (1 << 24)) return 1 << 24;  // far above any chip limit; avoids overflow
  }
  return static_cast<int>(p);
}

std::string Join(const std::vector<int>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

bool Listed(const Generation& gen, const std::string& topo) {
  return std::find(gen.topologies.begin(), gen.topologies.end(), topo) != gen.topologies.end();
}

bool IsValidTopology(const Generation& gen, const std::vector<int>& d) {
  if (static_cast<int>(d.size()) != gen.dims) return false;
  std::string topo = Join(d);
  if (Listed(gen, topo)) return true;
  if (gen.dims == 2) return false;
  if (!std::is_sorted(d.begin(), d.end())) return false;
  for (int x : d)
    if (x % 4 != 0) return false;
  return Product(d) <= gen.max_chips;
}

const MachineType* FindMachineType(const Generation& gen, std::string_view name) {
  for (const auto& m : gen.machine_types)
    if (m.name == name) return &m;
  return nullptr;
}

// The machine types a 2-D topology allows, in order of preference.
std::vector<int> ChipsPerVmFor(const Generation& gen, const std::string& topo, int chips) {
  if (gen.dims == 2) {
    if (topo == "1x1") return {1};
    if (topo == "2x2") return {4};
    if (topo == "2x4") return {8, 4};
    return {4};
  }
  if (chips == 1) return {1};
  return {4};
}

}  // namespace

const std::vector<Generation>& Generations() {
  static const std::vector<Generation> kGenerations = MakeGenerations();
  return kGenerations;
}

const Generation* FindGeneration(std::string_view name) {
  for (const auto& g : Generations()) {
    if (g.accelerator == name || g.name == name) return &g;
    for (const auto& a : g.aliases)
      if (a == name) return &g;
  }
  return nullptr;
}

std::vector<int> ParseTopology(std::string_view t) {
  std::vector<int> out;
  size_t i = 0;
  while (i <= t.size()) {
    size_t j = t.find('x', i);
    if (j == std::string_view::npos) j = t.size();
    std::string_view part = t.substr(i, j - i);
    int v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v <= 0 ||
        v > 4096)
      return {};
    out.push_back(v);
    i = j + 1;
    if (j == t.size()) break;
  }
  if (out.size() < 2 || out.size() > 3) return {};
  return out;
}

std::string DescribeTopologies(const Generation& gen) {
  std::string s;
  for (size_t i = 0; i < gen.topologies.size(); ++i) s += (i ? ", " : "") + gen.topologies[i];
  if (gen.dims == 3)
    s += ", or AxBxC with each a multiple of 4, A≤B≤C, ≤ " + std::to_string(gen.max_chips) +
         " chips";
  return s;
}

Result<Shape> ResolveShape(std::string_view accelerator, std::string_view topology,
                           std::string_view machine_type) {
  const Generation* gen = FindGeneration(accelerator);
  if (!gen) {
    std::string known;
    for (const auto& g : Generations()) known += (known.empty() ? "" : ", ") + g.accelerator;
    return Status::InvalidArgument("unknown accelerator \"" + std::string(accelerator) +
                                   "\" (expected one of " + known +
                                   ", or v4, v5e, v5p, v6e, v7x)");
  }
  std::vector<int> dims = ParseTopology(topology);
  if (dims.empty() || !IsValidTopology(*gen, dims)) {
    return Status::InvalidArgument("topology \"" + std::string(topology) +
                                   "\" is not valid for " + gen->name + " (expected " +
                                   std::to_string(gen->dims) + "-D: " +
                                   DescribeTopologies(*gen) + ")");
  }
  Shape shape;
  shape.generation = gen;
  shape.dims = dims;
  shape.topology = Join(dims);
  shape.chips = Product(dims);
  std::vector<int> allowed = ChipsPerVmFor(*gen, shape.topology, shape.chips);
  if (machine_type.empty()) {
    for (const auto& m : gen->machine_types)
      if (m.chips_per_vm == allowed.front()) shape.machine_type = m;
  } else {
    const MachineType* m = FindMachineType(*gen, machine_type);
    if (!m) {
      std::string names;
      for (const auto& mt : gen->machine_types) names += (names.empty() ? "" : ", ") + mt.name;
      return Status::InvalidArgument("machine type \"" + std::string(machine_type) +
                                     "\" is not a " + gen->name + " machine type (expected " +
                                     names + ")");
    }
    if (std::find(allowed.begin(), allowed.end(), m->chips_per_vm) == allowed.end()) {
      std::string names;
      for (const auto& mt : gen->machine_types)
        if (std::find(allowed.begin(), allowed.end(), mt.chips_per_vm) != allowed.end())
          names += (names.empty() ? "" : " or ") + mt.name;
      return Status::InvalidArgument("machine type \"" + std::string(machine_type) +
                                     "\" cannot form topology " + shape.topology +
                                     " (expected " + names + ")");
    }
    shape.machine_type = *m;
  }
  shape.vms = shape.chips / shape.machine_type.chips_per_vm;
  shape.multi_host = shape.vms > 1;
  if (!shape.multi_host)
    shape.placement = Placement::kNone;
  else if (gen->multi_host_placement == MultiHostPlacement::kWorkloadPolicy)
    shape.placement = Placement::kWorkloadPolicy;
  else
    shape.placement = Placement::kCompact;
  return shape;
}

const Generation* GenerationOfMachineType(std::string_view machine_type) {
  for (const auto& g : Generations())
    if (FindMachineType(g, machine_type)) return &g;
  return nullptr;
}

int ChipsPerVm(std::string_view machine_type) {
  for (const auto& g : Generations())
    if (const MachineType* m = FindMachineType(g, machine_type)) return m->chips_per_vm;
  return 0;
}

std::string SingleHostTopology(std::string_view machine_type) {
  const Generation* gen = GenerationOfMachineType(machine_type);
  if (!gen) return "";
  const int chips = ChipsPerVm(machine_type);
  if (gen->dims == 3) return chips == 1 ? "1x1x1" : "2x2x1";
  if (chips == 1) return "1x1";
  if (chips == 8) return "2x4";
  return "2x2";
}

}  // namespace tpu::catalog
