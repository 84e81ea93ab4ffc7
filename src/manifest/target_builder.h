// TargetBuilder: one target's parsed files → Target, with the checks that need
// the file's path or the other files: project and cluster fields against the
// directory, Cluster only in cluster.yaml and only once, names unique across
// the target's files, and defaults taken from cluster.yaml.
#pragma once

#include <map>
#include <string>

#include "manifest/parsed_file.h"
#include "manifest/types.h"

namespace tpu::manifest {

class TargetBuilder {
 public:
  // REQUIRES: `target` has project, cluster and dir set, and outlives the builder.
  explicit TargetBuilder(Target* target) : t_(target) {}
  // `path` is relative to the repo root; `name` is its last component.
  void AddFile(const std::string& path, const std::string& name, const ParsedFile& file);
  // Applies defaults that depend on every file (pool location from cluster.yaml).
  void Finish();

 private:
  void Fail(const std::string& file, int line, int column, std::string field, std::string message);
  void CheckDirField(const std::string& file, const std::optional<DirField>& f, const std::string& want,
                     const std::string& dir);
  void CheckUnique(std::map<std::string, SourceLocation>* seen, const char* kind, const std::string& file,
                   const ParsedDoc& doc);

  Target* t_;
  std::map<std::string, SourceLocation> pools_;   // name → where first declared
  std::map<std::string, SourceLocation> groups_;
};

}  // namespace tpu::manifest
