// The schemas the loader compiles in are the files in schemas/, and those are
// plain draft-07 documents editors and kubeconform can read as they are.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "manifest/schema_check.h"

namespace tpu::manifest {
namespace {

TEST(SchemaTest, EmbeddedCopiesMatchSchemaFiles) {
  ASSERT_EQ(EmbeddedSchemas().size(), 3u);
  for (const auto& s : EmbeddedSchemas()) {
    std::ifstream in(std::string(TPU_SOURCE_DIR) + "/schemas/" + s.file);
    ASSERT_TRUE(in) << s.file;
    std::stringstream file;
    file << in.rdbuf();
    EXPECT_EQ(nlohmann::json::parse(file.str()), nlohmann::json::parse(s.json))
        << s.file << " differs from its compiled-in copy; run src/manifest/embed_schemas.sh";
  }
}

TEST(SchemaTest, SchemasAreDraft07) {
  for (const auto& s : EmbeddedSchemas()) {
    auto j = nlohmann::json::parse(s.json);
    EXPECT_EQ(j["$schema"], "http://json-schema.org/draft-07/schema#") << s.file;
    EXPECT_EQ(j["additionalProperties"], false) << s.file;
  }
}

}  // namespace
}  // namespace tpu::manifest
