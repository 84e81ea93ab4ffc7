// The emulator's control endpoints under /sim/ (see cloud_emulator.h): read
// counters and state, seed clusters and node pools, set capacity and faults,
// reclaim spot capacity, record API exchanges. Not part of any Google API, so
// they need no token and are neither counted nor recorded.
#include "sim/cloud_context.h"
#include "sim/cloud_emulator_impl.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/gke_routes.h"

namespace tpu::sim {
namespace {

SimResponse Bad(const std::string& m) { return ErrorResponse(BadRequest(m)); }

}  // namespace

Status CloudEmulator::Impl::ReclaimLocked(const json& body) {
  AdvanceAndPersist(false);
  const std::string zone = body.value("zone", "");
  const std::string key = body.value("project", "") + "/" + body.value("location", "") + "/" +
                          body.value("cluster", "") + "/" + body.value("nodePool", "");
  int reclaimed = 0;
  for (auto& [k, pool] : state.pools) {
    const bool named = !body.value("nodePool", "").empty();
    if (named ? k != key : pool.zone != zone) continue;
    if (!pool.wire["config"].value("spot", false) && !pool.wire["config"].value("preemptible", false)) {
      if (named) return Status::FailedPrecondition("node pool " + key + " is not a spot pool");
      continue;
    }
    ReleasePoolChips(state, pool);
    pool.wire["status"] = "RUNNING_WITH_ERROR";
    pool.wire["statusMessage"] =
        "Spot VMs of this node pool were preempted: the capacity was reclaimed.";
    ++reclaimed;
  }
  if (reclaimed == 0 && !body.value("nodePool", "").empty())
    return Status::NotFound("node pool " + key + " not found");
  AdvanceAndPersist(true);
  return Status::OK();
}

SimResponse CloudEmulator::Impl::Control(const SimRequest& req) {
  const std::string what = req.segments.size() >= 2 ? req.segments[1] : "";
  const json body = req.parsed.is_object() ? req.parsed : json::object();
  std::lock_guard<std::mutex> lock(mu);
  if (what == "counters" && req.method == "GET") return OkResponse(counters.ToJson());
  if (what == "state" && req.method == "GET") {
    AdvanceAndPersist(false);
    json s = state.ToJson();
    if (!persist_error.ok()) s["persistError"] = persist_error.ToString();
    return OkResponse(s);
  }
  if (req.method != "POST" && !(req.method == "GET" && (what == "capacity" || what == "faults")))
    return ErrorResponse(NotFound("No such control endpoint: " + req.method + " " + req.path));
  if (what == "reset") {
    counters = CloudCounters{};
    if (body.value("state", false)) state = CloudState{};
    if (body.value("faults", false)) faults.Configure(FaultConfig{});
    AdvanceAndPersist(body.value("state", false));
    return OkResponse(json::object());
  }
  if (what == "capacity") {
    if (req.method == "POST") {
      state.capacity.Apply(body);
      AdvanceAndPersist(true);
    }
    return OkResponse(state.capacity.ToJson());
  }
  if (what == "faults") {
    if (req.method == "POST") {
      auto config = FaultConfigFromJson(body);
      if (!config.ok()) return Bad(config.status().message());
      if (Status s = faults.Configure(*config); !s.ok()) return Bad(s.message());
    }
    return OkResponse(FaultConfigToJson(faults.config()));
  }
  if (what == "reclaim") {
    Status s = ReclaimLocked(body);
    if (!s.ok()) return Bad(s.message());
    return OkResponse(json::object());
  }
  if (what == "record") {
    if (record.is_open()) record.close();
    const std::string file = body.value("file", "");
    if (!file.empty()) {
      record.open(file, std::ios::app);
      if (!record) return Bad("cannot open " + file);
    }
    return OkResponse(json::object());
  }
  if (what == "seed") {
    AdvanceAndPersist(false);
    SimContext ctx = Context();
    for (const auto& c : body.value("clusters", json::array())) {
      json cluster = json::object();
      if (c.contains("releaseChannel")) cluster["releaseChannel"] = {{"channel", c["releaseChannel"]}};
      EnsureGkeCluster(ctx, c.value("project", ""), c.value("location", ""), c.value("name", ""), cluster);
    }
    // Node pools go through the real create route, then their operations end at once.
    for (const auto& p : body.value("nodePools", json::array())) {
      SimRequest create;
      create.method = "POST";
      create.path = "/v1/projects/" + p.value("project", "") + "/locations/" +
                    p.value("location", "") + "/clusters/" + p.value("cluster", "") + "/nodePools";
      create.segments = SplitPath(create.path);
      create.parsed = {{"nodePool", p.value("nodePool", json::object())}};
      SimResponse r = HandleGke(ctx, create);
      if (r.status != 200) return r;
      for (auto& [k, op] : state.gke_ops)
        if (!op.done) op.done_ms = ctx.now_ms;
      AdvanceOperations(state, ctx.now_ms);
    }
    AdvanceAndPersist(true);
    return OkResponse(json::object());
  }
  return ErrorResponse(NotFound("No such control endpoint: " + req.method + " " + req.path));
}

}  // namespace tpu::sim
