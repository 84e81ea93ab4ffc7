// Compute list and aggregatedList responses with the real paging contract:
// at most `maxResults` items (default and cap 500), and a `nextPageToken` to
// pass back as `pageToken` while more remain. Aggregated lists key items by
// scope ("zones/us-central1-a", "regions/us-central1", "global").
#include <algorithm>
#include <optional>
#include <vector>

#include "sim/cloud_errors.h"
#include "sim/compute_filter.h"
#include "sim/compute_routes.h"

namespace tpu::sim {
namespace {

// "instanceGroupManagers" → "instanceGroupManager" for kind names.
std::string Singular(const std::string& collection) {
  if (collection.ends_with("ies")) return collection.substr(0, collection.size() - 3) + "y";
  return collection.substr(0, collection.size() - 1);
}

}  // namespace

std::optional<ApiError> ComputePaginate(const SimRequest& req, size_t total, ComputePage* page) {
  size_t max = 500;
  if (req.HasQuery("maxResults")) {
    const std::string v = req.Query("maxResults");
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      return BadRequest("Invalid value for field 'maxResults': '" + v + "'. Must be a non-negative integer.");
    max = std::min<size_t>(500, std::stoul(v));
    if (max == 0) max = 500;
  }
  if (req.HasQuery("pageToken") && !req.Query("pageToken").empty()) {
    const std::string t = req.Query("pageToken");
    // Tokens are opaque to clients; the emulator's are "o<offset>".
    if (t.size() < 2 || t[0] != 'o' || t.find_first_not_of("0123456789", 1) != std::string::npos)
      return BadRequest("Invalid value for field 'pageToken': '" + t + "'. Invalid page token.");
    page->begin = std::min<size_t>(total, std::stoul(t.substr(1)));
  }
  page->end = std::min(total, page->begin + max);
  if (page->end < total) page->next = "o" + std::to_string(page->end);
  return std::nullopt;
}

namespace {

// Resources (or operations) of a project in one collection, in key order, with their scope.
std::vector<std::pair<std::string, const json*>> Collect(const CloudState& state,
                                                         const std::string& project,
                                                         const std::string& collection,
                                                         const std::string& only_scope) {
  std::vector<std::pair<std::string, const json*>> out;
  const std::string prefix = "projects/" + project + "/";
  auto scan = [&](const std::string& key, const json& value) {
    if (key.rfind(prefix, 0) != 0) return;
    const std::string rest = key.substr(prefix.size());  // SCOPE/COLLECTION/NAME
    const size_t name_slash = rest.rfind('/');
    const size_t coll_slash = rest.rfind('/', name_slash - 1);
    if (name_slash == std::string::npos || coll_slash == std::string::npos) return;
    const std::string coll = rest.substr(coll_slash + 1, name_slash - coll_slash - 1);
    const std::string scope = rest.substr(0, coll_slash);
    if (coll != collection) return;
    if (!only_scope.empty() && scope != only_scope) return;
    out.emplace_back(scope, &value);
  };
  if (collection == "operations") {
    for (const auto& [k, op] : state.compute_ops) scan(k, op.wire);
  } else {
    for (const auto& [k, v] : state.compute) scan(k, v);
  }
  return out;
}

// Keeps the items `filter` selects; paging then runs over what is left.
std::optional<ApiError> ApplyFilter(const SimRequest& req, std::vector<std::pair<std::string, const json*>>* items) {
  std::optional<ComputeFilter> filter;
  if (auto err = ParseComputeFilter(req.Query("filter"), &filter)) return err;
  if (!filter) return std::nullopt;
  std::erase_if(*items, [&](const auto& item) { return !filter->Matches(*item.second); });
  return std::nullopt;
}

}  // namespace

SimResponse ComputeList(SimContext& ctx, const SimRequest& req, const std::string& project,
                        const std::string& scope, const std::string& collection) {
  auto all = Collect(ctx.state, project, collection, scope);
  if (auto err = ApplyFilter(req, &all)) return ErrorResponse(*err);
  ComputePage page;
  if (auto err = ComputePaginate(req, all.size(), &page)) return ErrorResponse(*err);
  const std::string path = "projects/" + project + "/" + scope + "/" + collection;
  SimResponse r;
  r.body = {{"kind", "compute#" + Singular(collection) + "List"},
            {"id", path},
            {"selfLink", ComputeUrl(path)}};
  json items = json::array();
  for (size_t i = page.begin; i < page.end; ++i) items.push_back(*all[i].second);
  if (!items.empty()) r.body["items"] = items;
  if (!page.next.empty()) r.body["nextPageToken"] = page.next;
  return r;
}

SimResponse ComputeAggregatedList(SimContext& ctx, const SimRequest& req, const std::string& project,
                                  const std::string& collection) {
  auto all = Collect(ctx.state, project, collection, "");
  if (auto err = ApplyFilter(req, &all)) return ErrorResponse(*err);
  // Scopes group their items; paging runs over the flattened order.
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ComputePage page;
  if (auto err = ComputePaginate(req, all.size(), &page)) return ErrorResponse(*err);
  const std::string path = "projects/" + project + "/aggregated/" + collection;
  SimResponse r;
  r.body = {{"kind", "compute#" + Singular(collection) + "AggregatedList"},
            {"id", path},
            {"selfLink", ComputeUrl(path)}};
  json items = json::object();
  for (size_t i = page.begin; i < page.end; ++i)
    items[all[i].first][collection].push_back(*all[i].second);
  r.body["items"] = items;
  if (!page.next.empty()) r.body["nextPageToken"] = page.next;
  return r;
}

}  // namespace tpu::sim
