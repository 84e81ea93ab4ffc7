// TargetBuilder: stamps each cached, path-free ParsedFile with its path and
// adds what it declares to the target.
#include "manifest/target_builder.h"

#include <algorithm>

namespace tpu::manifest {
namespace {

std::string At(const SourceLocation& w) {
  return w.file + ":" + std::to_string(w.line) + ":" + std::to_string(w.column);
}

// A zone is region-letter ("us-central2-b"); a region has one dash.
bool IsZone(const std::string& location) {
  return std::count(location.begin(), location.end(), '-') == 2;
}

}  // namespace

void TargetBuilder::Fail(const std::string& file, int line, int column, std::string field, std::string message) {
  t_->errors.push_back(Error{{file, line, column}, std::move(field), std::move(message)});
}

void TargetBuilder::CheckDirField(const std::string& file, const std::optional<DirField>& f, const std::string& want,
                                  const std::string& dir) {
  if (!f || f->value == want) return;
  Fail(file, f->line, f->column, f->field,
       "\"" + f->value + "\" contradicts the directory " + dir + "/ (expected \"" + want +
           "\"; a manifest's target is its directory)");
}

void TargetBuilder::CheckUnique(std::map<std::string, SourceLocation>* seen, const char* kind,
                                const std::string& file, const ParsedDoc& doc) {
  if (doc.name.empty()) return;
  SourceLocation here{file, doc.name_line, doc.name_column};
  auto [it, fresh] = seen->emplace(doc.name, here);
  if (!fresh)
    Fail(file, doc.name_line, doc.name_column, "metadata.name",
         std::string("duplicate ") + kind + " \"" + doc.name + "\" in " + t_->dir + " (first declared at " +
             At(it->second) + ")");
}

void TargetBuilder::AddFile(const std::string& path, const std::string& name, const ParsedFile& file) {
  for (const auto& e : file.errors) Fail(path, e.line, e.column, e.field, e.message);
  const std::string project_dir = "deploy/" + t_->project;
  const bool is_cluster_file = name == "cluster.yaml" || name == "cluster.yml";
  for (const ParsedDoc& doc : file.docs) {
    CheckDirField(path, doc.project, t_->project, project_dir);
    CheckDirField(path, doc.cluster, t_->cluster, t_->dir);
    if (doc.kind == Kind::kCluster) {
      if (!is_cluster_file) {
        Fail(path, doc.line, doc.column, "kind", "a Cluster belongs in " + t_->dir + "/cluster.yaml");
        continue;
      }
      if (t_->policy.declared) {
        Fail(path, doc.line, doc.column, "kind",
             "a second Cluster document (the first is at " + At(t_->policy.where) + "); expected one");
        continue;
      }
      t_->policy = std::get<ClusterPolicy>(doc.value);
      t_->policy.where.file = path;
      continue;
    }
    if (is_cluster_file) {
      Fail(path, doc.line, doc.column, "kind",
           "cluster.yaml holds only the Cluster document; put TPUNodePools and TPUNodeGroups in other files");
      continue;
    }
    if (doc.kind == Kind::kTPUNodePool) {
      CheckUnique(&pools_, "TPUNodePool", path, doc);
      if (!doc.ok) continue;
      TPUNodePool pool = std::get<TPUNodePool>(doc.value);
      pool.where.file = path;
      if (pool.management) pool.management->auto_upgrade_at.file = path;
      t_->pools.push_back(std::move(pool));
    } else {
      CheckUnique(&groups_, "TPUNodeGroup", path, doc);
      if (!doc.ok) continue;
      TPUNodeGroup group = std::get<TPUNodeGroup>(doc.value);
      group.where.file = path;
      t_->groups.push_back(std::move(group));
    }
  }
}

void TargetBuilder::Finish() {
  const auto& location = t_->policy.location;
  if (!location || !IsZone(*location)) return;
  for (auto& pool : t_->pools)
    if (pool.location.empty()) pool.location = *location;
}

}  // namespace tpu::manifest
