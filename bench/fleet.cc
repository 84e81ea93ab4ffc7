// Fleet repo generator (see fleet.h).
#include "bench/fleet.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace tpu::bench {
namespace fs = std::filesystem;
namespace {

// Zones that serve several TPU generations; a cluster is zonal, in one of them.
const char* const kZones[] = {"us-central1-a", "us-central1-b", "us-east5-a",
                              "europe-west4-a", "us-west4-a", "asia-northeast1-b"};

// One TPUNodePool shape of the mix. `slices` node pools per manifest.
struct Shape {
  const char* prefix;
  const char* accelerator;
  const char* topology;
  int slices;
  bool single_host;
};
const Shape kShapes[] = {
    {"v5e-serve", "v5e", "2x4", 1, true},             // ct5lp-hightpu-8t, one VM
    {"v6e-train", "tpu-v6e-slice", "4x4", 2, false},  // 4 VMs of 4t per slice
    {"v5p-res", "v5p", "2x2x4", 1, false},            // 4 VMs, reservation
    {"v4-dev", "v4", "2x2x1", 1, true},               // one VM of ct4p-hightpu-4t
    {"v6e-auto", "v6e", "1x1", 1, true},              // autoscaled single chip
    {"v5e-multi", "tpu-v5-lite-podslice", "4x8", 3, false},  // 8 VMs per slice
    {"v6e-box", "v6e", "2x4", 1, true},               // ct6e-standard-8t
};

std::string PoolDoc(const Shape& s, const std::string& name, int slices, int index,
                    std::mt19937_64& rng, const std::string& project) {
  std::ostringstream o;
  o << "apiVersion: tpu-provisioner.io/v1alpha1\nkind: TPUNodePool\nmetadata:\n  name: " << name
    << "\nspec:\n  accelerator: " << s.accelerator << "\n  topology: " << s.topology << "\n";
  if (slices != 1) o << "  slices: " << slices << "\n";
  // Capacity: spot for a third, a reservation for v5p and some others, on-demand otherwise.
  const int roll = static_cast<int>(rng() % 3);
  if (std::string(s.prefix) == "v5p-res" || (roll == 1 && !s.single_host)) {
    o << "  capacity:\n    type: reservation\n    reservation: res-" << s.prefix << "-" << index % 4
      << "\n";
    if (roll == 2) o << "    reservationProject: " << project << "\n";
  } else if (roll == 0) {
    o << "  capacity:\n    type: spot\n";
  }
  if (s.single_host) {
    if (std::string(s.prefix) == "v6e-auto") {
      o << "  autoscaling:\n    enabled: true\n    minNodeCount: 0\n    maxNodeCount: "
        << 2 + rng() % 6 << "\n";
    } else {
      o << "  nodeCount: " << 1 + rng() % 4 << "\n";
    }
  }
  o << "  nodeConfig:\n    labels:\n      team: team-" << rng() % 12 << "\n      bench-edit: \"v0\"\n";
  if (rng() % 2 == 0)
    o << "    taints:\n      - key: workload\n        value: training\n        effect: NoSchedule\n";
  o << "    resourceLabels:\n      cost-center: cc-" << rng() % 40 << "\n";
  if (rng() % 4 == 0) o << "  management:\n    autoUpgrade: true\n";
  return o.str();
}

std::string GroupDoc(const std::string& name, const std::string& project, const std::string& zone,
                     std::mt19937_64& rng) {
  const std::string region = zone.substr(0, zone.rfind('-'));
  std::ostringstream o;
  o << "apiVersion: tpu.google.com/v1alpha1\nkind: TPUNodeGroup\nmetadata:\n  name: " << name
    << "\n  namespace: default\nspec:\n  project: " << project << "\n  nodeLocation: " << zone
    << "\n  nodeCount: 2\n  acceleratorConnectionMode: \"STATIC\"\n  topology: 2x2x2\n"
    << "  targetSizePolicyMode: \"BULK\"\n  instanceConfig:\n    machineType: tpu7x-standard-4t\n";
  // Bulk mode takes only reservation-bound (or flex-start) templates.
  o << "    provisioningModel: \"RESERVATION_BOUND\"\n    reservation: res-tpu7x-" << rng() % 3 << "\n";
  o << "    image: projects/ubuntu-os-accelerator-images/global/images/ubuntu-accel-2404-amd64-tpu-tpu7x-v20260320\n"
    << "    subnetwork: projects/" << project << "/regions/" << region << "/subnetworks/default\n"
    << "    bootDiskSizeGB: 100\n  bootstrapKubernetes:\n    version: \"1.31\"\n"
    << "    controlPlaneIP: 10.128.0." << 2 + rng() % 200 << "\n";
  return o.str();
}

Status WriteFile(const fs::path& path, const std::string& text, FleetSummary* sum) {
  std::ofstream out(path);
  out << text;
  if (!out) return Status::IoError(path.string() + ": cannot write");
  ++sum->files;
  sum->bytes += text.size();
  return Status::OK();
}

}  // namespace

std::string FleetSpec::ProjectId(int p) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "bench-p%03d", p);
  return buf;
}

std::string FleetSpec::ClusterName(int c) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "cluster-%03d", c);
  return buf;
}

Result<FleetSummary> WriteFleetRepo(const FleetSpec& spec, const std::string& repo) {
  FleetSummary sum;
  std::mt19937_64 rng(spec.seed);
  const int kDocsPerFile = 4;  // a few manifests per file, as people write them
  for (int p = 0; p < spec.projects; ++p) {
    const std::string project = spec.ProjectId(p);
    for (int c = 0; c < spec.clusters; ++c) {
      const std::string cluster = spec.ClusterName(c);
      const fs::path dir = fs::path(repo) / "deploy" / project / cluster;
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return Status::IoError(dir.string() + ": " + ec.message());
      const std::string zone = kZones[rng() % std::size(kZones)];
      Status s = WriteFile(dir / "cluster.yaml",
                           "apiVersion: tpu-provisioner.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: " +
                               cluster + "\nspec:\n  location: " + zone + "\n",
                           &sum);
      if (!s.ok()) return s;
      ++sum.targets;
      // Node pools: walk the shape mix from a per-cluster offset until N pools are declared.
      std::vector<std::string> docs;
      int left = spec.pools;
      size_t k = rng() % std::size(kShapes);
      for (int i = 0; left > 0; ++i, ++k) {
        const Shape& shape = kShapes[k % std::size(kShapes)];
        const int slices = std::min(shape.slices, left);
        docs.push_back(PoolDoc(shape, std::string(shape.prefix) + "-" + std::to_string(i), slices,
                               i, rng, project));
        left -= slices;
        sum.node_pools += slices;
        ++sum.pool_manifests;
      }
      for (size_t f = 0; f * kDocsPerFile < docs.size(); ++f) {
        std::string text = "# Generated by tpu-bench fleet (seed " + std::to_string(spec.seed) + ").\n";
        for (size_t d = f * kDocsPerFile; d < std::min(docs.size(), (f + 1) * kDocsPerFile); ++d)
          text += (d % kDocsPerFile == 0 ? "" : "---\n") + docs[d];
        s = WriteFile(dir / ("pools-" + std::to_string(f) + ".yaml"), text, &sum);
        if (!s.ok()) return s;
      }
      if (spec.groups > 0) {
        std::string text;
        for (int g = 0; g < spec.groups; ++g) {
          text += (g == 0 ? "" : "---\n") + GroupDoc("ng-" + std::to_string(c) + "-" + std::to_string(g),
                                                      project, zone, rng);
          ++sum.node_groups;
        }
        s = WriteFile(dir / "groups.yaml", text, &sum);
        if (!s.ok()) return s;
      }
    }
  }
  return sum;
}

std::string EditedFile(const FleetSpec& spec) {
  // The middle target, so neither the first nor the last directory is special.
  return "deploy/" + spec.ProjectId(spec.projects / 2) + "/" + spec.ClusterName(spec.clusters / 2) +
         "/pools-0.yaml";
}

Status EditOneFile(const std::string& repo, const std::string& rel, const std::string& value) {
  const fs::path path = fs::path(repo) / rel;
  std::ifstream in(path);
  if (!in) return Status::NotFound(path.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string key = "bench-edit: \"";
  const auto at = text.find(key);
  if (at == std::string::npos) return Status::InvalidArgument(path.string() + ": no bench-edit label");
  const auto end = text.find('"', at + key.size());
  text.replace(at + key.size(), end - at - key.size(), value);
  std::ofstream out(path);
  out << text;
  if (!out) return Status::IoError(path.string() + ": cannot write");
  return Status::OK();
}

}  // namespace tpu::bench
