// The plan as JSON: the `plan -o json` output and the `plan -out FILE` file
// that `apply FILE` reads back. One document for both; the schema is versioned
// (kPlanSchemaVersion) and documented in docs/plan-json.md. Round-trips:
// PlanFromJson(PlanToJson(p)) == p for every field of model.h.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "plan/model.h"

namespace tpu::plan {

// indent < 0: one line.
std::string PlanToJson(const Plan& plan, int indent = 2);

// InvalidArgument on malformed JSON, a missing required field, an unknown
// enum name, or a schema_version other than kPlanSchemaVersion.
Result<Plan> PlanFromJson(std::string_view text);

}  // namespace tpu::plan
