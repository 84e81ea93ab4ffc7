// JSON Schema validation of manifest documents with valijson, against the
// schemas in schemas/ (compiled into the binary, see embed_schemas.sh).
//
// valijson reports generic messages ("Value type not permitted by 'type'
// constraint") at a JSON path; we map the path back to the YAML node for its
// line and column, drop the follow-on errors valijson adds for each enclosing
// object, and write the message from the schema itself: the expected type,
// the enum values, the description of a pattern, the allowed field names.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "manifest/doc_error.h"
#include "manifest/yaml_tree.h"

namespace tpu::manifest {

enum class Kind { kTPUNodePool, kTPUNodeGroup, kCluster };

struct EmbeddedSchema {
  const char* file;  // name under schemas/
  const char* json;
};
// The schema texts, one per kind (schema_data.cc).
const std::vector<EmbeddedSchema>& EmbeddedSchemas();

// Validates documents. Compiles the schemas once per checker and keeps
// valijson's regex cache across documents, so make one per load, not per
// document. Not thread-safe.
class SchemaChecker {
 public:
  SchemaChecker();
  ~SchemaChecker();
  SchemaChecker(const SchemaChecker&) = delete;
  SchemaChecker& operator=(const SchemaChecker&) = delete;

  // Appends `doc`'s violations of the schema of `kind` to `errors` and the
  // field paths they name to `bad_fields` (so later checks can skip them).
  void Check(Kind kind, const YamlDocument& doc, std::vector<DocError>* errors,
             std::set<std::string>* bad_fields);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpu::manifest
