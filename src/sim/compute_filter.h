// Compute's list `filter` parameter, the part the emulator understands: one
// AIP-160 comparison of a top-level field, `FIELD = VALUE` or
// `FIELD != VALUE` (optionally in parentheses, the value optionally quoted),
// as in `status != DONE`. Source: the `filter` field of every Compute list
// request ("The operator must be either =, !=, >, <, <=, >= or :"), e.g.
// ListZoneOperationsRequest in the Compute v1 reference; see docs/emulator.md.
// Other operators and several expressions are refused with a 400 naming what
// the emulator supports, not silently ignored.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cloud_errors.h"

namespace tpu::sim {

struct ComputeFilter {
  std::string field;
  bool equal = true;  // = (else !=)
  std::string value;
  // A string field compares as written; a number or a bool by its JSON text;
  // a missing field matches only `!=`.
  bool Matches(const nlohmann::json& item) const;
};

// nullopt with *out set, or the 400 the request gets. An empty filter leaves *out unset.
std::optional<ApiError> ParseComputeFilter(const std::string& text, std::optional<ComputeFilter>* out);

}  // namespace tpu::sim
