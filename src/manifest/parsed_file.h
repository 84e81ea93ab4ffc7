// ParseManifestFile: one file's bytes → typed documents and DocErrors, with
// everything that can be checked without knowing the file's path (YAML,
// schema, catalog, names). What depends on the path — the directory's project
// and cluster, duplicates across files — is checked by the loader. A
// ParsedFile is what ParseCache keeps per content id.
#pragma once

#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "manifest/doc_error.h"
#include "manifest/schema_check.h"
#include "manifest/types.h"
#include "manifest/yaml_tree.h"

namespace tpu::manifest {

// A value that must agree with the directory the file is in.
struct DirField {
  std::string value;
  std::string field;  // "spec.project", "metadata.name"
  int line = 0;
  int column = 0;
};

struct ParsedDoc {
  Kind kind = Kind::kTPUNodePool;
  std::string name;                 // metadata.name
  int name_line = 0, name_column = 0;
  int line = 0, column = 0;         // the `kind:` key
  std::optional<DirField> project;  // spec.project when written
  std::optional<DirField> cluster;  // spec.cluster (pools) or metadata.name (Cluster)
  bool ok = true;                   // the document had no error
  std::variant<TPUNodePool, TPUNodeGroup, ClusterPolicy> value;
};

struct ParsedFile {
  std::vector<ParsedDoc> docs;   // recognised documents, in file order
  std::vector<DocError> errors;  // every error of the file, in file order
};

// REQUIRES: `checker` outlives the call; one checker serves a whole load.
ParsedFile ParseManifestFile(std::string_view bytes, const YamlLimits& limits, SchemaChecker& checker);

}  // namespace tpu::manifest
