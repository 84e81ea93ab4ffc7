// The reference the list readers (list_reader.h) are held to: the same bodies
// read as the clients read them before, through nlohmann's tree and the
// *FromJson readers of gke_wire.h and compute_wire.h, walking an aggregated
// page's `items` as ComputeClient::ListAggregated did (scopes in the tree's
// order, `field` arrays only, the scope filling in what an item leaves out).
// Shared by list_reader_test.cc and tests/cloud/list_reader_emulator_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cloud/compute_wire.h"
#include "cloud/gke_wire.h"
#include "cloud/list_reader.h"

namespace tpu::cloud::testing {

// A body the old path refused before reading it: nlohmann could not parse it.
inline Status NotJson() { return Status::InvalidArgument("response is not JSON"); }

inline Result<std::vector<Cluster>> ReferenceClusterList(const std::string& body, const std::string& project) {
  if (body.empty()) return std::vector<Cluster>{};
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return NotJson();
  return ClusterListFromJson(j, project);
}

// One page: the items, then the page's next token and unreachables.
template <typename T>
struct ReferencePage {
  std::vector<T> items;
  AggregatedPage page;
};

// `read(item, scope, &out)` → Status, as the client's lambdas did (OK and
// nothing added: skipped).
template <typename T, typename Read>
Result<ReferencePage<T>> ReadReferencePage(const std::string& body, const std::string& field, Read read) {
  ReferencePage<T> out;
  if (body.empty()) return out;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return NotJson();
  if (j.contains("items") && j["items"].is_object()) {
    for (auto& [scope, list] : j["items"].items()) {
      if (!list.is_object() || !list.contains(field) || !list[field].is_array()) continue;
      for (const auto& item : list[field]) {
        Status s = read(scope, item, &out.items);
        if (!s.ok()) return s;
      }
    }
  }
  if (j.contains("unreachables") && j["unreachables"].is_array() && !j["unreachables"].empty())
    out.page.unreachables = j["unreachables"].dump();
  out.page.next_page_token =
      j.contains("nextPageToken") && j["nextPageToken"].is_string() ? j["nextPageToken"].get<std::string>() : "";
  return out;
}

inline Result<ReferencePage<WorkloadPolicy>> ReferenceWorkloadPolicies(const std::string& body) {
  return ReadReferencePage<WorkloadPolicy>(
      body, "resourcePolicies", [](const std::string& scope, const nlohmann::json& item, auto* out) -> Status {
        if (!IsWorkloadPolicyJson(item)) return Status::OK();
        auto p = WorkloadPolicyFromJson(item);
        if (!p.ok()) return p.status();
        if (p->region.empty()) p->region = LastSegment(scope);
        out->push_back(std::move(*p));
        return Status::OK();
      });
}

inline Result<ReferencePage<InstanceTemplate>> ReferenceInstanceTemplates(const std::string& body) {
  return ReadReferencePage<InstanceTemplate>(
      body, "instanceTemplates", [](const std::string&, const nlohmann::json& item, auto* out) -> Status {
        auto t = InstanceTemplateFromJson(item);
        if (!t.ok()) return t.status();
        out->push_back(std::move(*t));
        return Status::OK();
      });
}

inline Result<ReferencePage<InstanceGroupManager>> ReferenceInstanceGroupManagers(const std::string& body) {
  return ReadReferencePage<InstanceGroupManager>(
      body, "instanceGroupManagers", [](const std::string& scope, const nlohmann::json& item, auto* out) -> Status {
        auto m = InstanceGroupManagerFromJson(item);
        if (!m.ok()) return m.status();
        if (m->zone.empty()) m->zone = LastSegment(scope);
        out->push_back(std::move(*m));
        return Status::OK();
      });
}

inline Result<ReferencePage<Reservation>> ReferenceReservations(const std::string& body, const std::string& project) {
  return ReadReferencePage<Reservation>(
      body, "reservations", [&](const std::string& scope, const nlohmann::json& item, auto* out) -> Status {
        auto r = ReservationFromJson(item, project);
        if (!r.ok()) return r.status();
        if (r->zone.empty()) r->zone = LastSegment(scope);
        out->push_back(std::move(*r));
        return Status::OK();
      });
}

inline Result<ReferencePage<Operation>> ReferenceComputeOperations(const std::string& body, const std::string& project,
                                                                   bool only_running) {
  return ReadReferencePage<Operation>(
      body, "operations", [&](const std::string& scope, const nlohmann::json& item, auto* out) -> Status {
        auto op = ComputeOperationFromJson(item, project);
        if (!op.ok()) return op.status();
        if (only_running && op->done()) return Status::OK();
        if (op->scope == "global" && scope != "global") {
          auto slash = scope.find('/');
          if (slash != std::string::npos) {
            op->scope = scope.substr(0, slash);
            op->location = scope.substr(slash + 1);
          }
        }
        out->push_back(std::move(*op));
        return Status::OK();
      });
}

// Both readers of one page agree: the same items field by field (operator==),
// the same page fields, or the same error.
template <typename T, typename ReadNew>
void ExpectSamePage(const std::string& body, const Result<ReferencePage<T>>& want, ReadNew read_new) {
  std::string copy = body;
  std::vector<T> got;
  Result<AggregatedPage> page = read_new(copy, &got);
  ASSERT_EQ(page.ok(), want.ok()) << body << "\nnew: " << page.status().ToString()
                                  << "\nold: " << want.status().ToString();
  if (!want.ok()) {
    EXPECT_EQ(page.status(), want.status()) << body;
    return;
  }
  EXPECT_EQ(page->next_page_token, want->page.next_page_token) << body;
  EXPECT_EQ(page->unreachables, want->page.unreachables) << body;
  ASSERT_EQ(got.size(), want->items.size()) << body;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == want->items[i]) << "item " << i << " of " << body;
}

inline void ExpectSameClusters(const std::string& body, const std::string& project) {
  auto want = ReferenceClusterList(body, project);
  std::string copy = body;
  auto got = ReadClusterList(copy, project);
  ASSERT_EQ(got.ok(), want.ok()) << body << "\nnew: " << got.status().ToString()
                                 << "\nold: " << want.status().ToString();
  if (!want.ok()) {
    EXPECT_EQ(got.status(), want.status()) << body;
    return;
  }
  ASSERT_EQ(got->size(), want->size()) << body;
  for (size_t c = 0; c < got->size(); ++c) {
    const Cluster& g = (*got)[c];
    const Cluster& w = (*want)[c];
    ASSERT_EQ(g.node_pools.size(), w.node_pools.size()) << "cluster " << c << " of " << body;
    for (size_t p = 0; p < g.node_pools.size(); ++p)
      EXPECT_TRUE(g.node_pools[p] == w.node_pools[p])
          << "cluster " << c << " pool " << p << ":\nnew " << NodePoolToJson(g.node_pools[p]).dump()
          << "\nold " << NodePoolToJson(w.node_pools[p]).dump();
    EXPECT_TRUE(g == w) << "cluster " << c << " of " << body;
  }
}

inline void ExpectSameGkeOperations(const std::string& body, const std::string& project) {
  Result<std::vector<Operation>> want = std::vector<Operation>{};
  if (!body.empty()) {
    auto j = nlohmann::json::parse(body, nullptr, false);
    want = j.is_discarded() ? Result<std::vector<Operation>>(NotJson()) : GkeOperationListFromJson(j, project);
  }
  std::string copy = body;
  auto got = ReadGkeOperationList(copy, project);
  ASSERT_EQ(got.ok(), want.ok()) << body << "\nnew: " << got.status().ToString()
                                 << "\nold: " << want.status().ToString();
  if (!want.ok()) {
    EXPECT_EQ(got.status(), want.status()) << body;
    return;
  }
  ASSERT_EQ(got->size(), want->size()) << body;
  for (size_t i = 0; i < got->size(); ++i)
    EXPECT_TRUE((*got)[i] == (*want)[i]) << "operation " << i << ":\nnew " << GkeOperationToJson((*got)[i]).dump()
                                         << "\nold " << GkeOperationToJson((*want)[i]).dump();
}

}  // namespace tpu::cloud::testing
