// CloudEmulator: HTTP wiring (cpp-httplib, kept out of every header), bearer
// tokens, fault injection, per-request latency, counters, recording, and the
// dispatch of API requests to the GKE and Compute routes.
#include "sim/cloud_emulator.h"

#include <httplib.h>

#include <chrono>

#include "base/elastic_task_queue.h"
#include "sim/cloud_context.h"
#include "sim/cloud_emulator_impl.h"
#include "sim/cloud_errors.h"
#include "sim/cloud_operations.h"
#include "sim/compute_routes.h"
#include "sim/gke_concurrency.h"
#include "sim/gke_routes.h"
#include "sim/listen_backlog.h"
#include "sim/state_file.h"

namespace tpu::sim {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string RoutePattern(const SimRequest& req) {
  static const std::map<std::string, std::string> kIds = {
      {"projects", "{project}"}, {"locations", "{location}"}, {"clusters", "{cluster}"},
      {"nodePools", "{nodePool}"}, {"operations", "{operation}"}, {"zones", "{zone}"},
      {"regions", "{region}"}, {"resourcePolicies", "{resourcePolicy}"},
      {"instanceTemplates", "{instanceTemplate}"},
      {"instanceGroupManagers", "{instanceGroupManager}"}, {"instances", "{instance}"}};
  std::string out = req.method + " ";
  const auto& s = req.segments;
  for (size_t i = 0; i < s.size(); ++i) {
    out += "/";
    if (i > 0 && kIds.count(s[i - 1]) && s[i] != "-") {
      std::string seg = s[i];
      auto colon = seg.find(':');
      out += kIds.at(s[i - 1]) + (colon == std::string::npos ? "" : seg.substr(colon));
    } else {
      out += s[i];
    }
  }
  return out;
}

int64_t CloudEmulator::Impl::WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

CloudEmulator::Impl::Impl(CloudEmulatorOptions o) : options(std::move(o)), rng(options.faults.seed) {}
CloudEmulator::Impl::~Impl() = default;

SimContext CloudEmulator::Impl::Context() {
  SimContext ctx{state, Now(), rng, options.op_latency_ms};
  ctx.operations_quota = options.concurrent_operations_quota;
  ctx.release_channel = options.release_channel;
  return ctx;
}

void CloudEmulator::Impl::CountPeaks(const std::vector<std::string>& clusters) {
  // A cluster's count only grows when an operation starts on it.
  for (const std::string& cluster : clusters) {
    int64_t& peak = counters.peak_operations_by_cluster[cluster];
    peak = std::max<int64_t>(peak, RunningOperationsOn(state, cluster));
  }
}

void CloudEmulator::Impl::AdvanceAndPersist(bool ctx_changed) {
  bool changed = AdvanceOperations(state, Now()) || ctx_changed;
  if (!changed) return;
  cv.notify_all();
  if (options.state_file.empty()) return;
  Status s = WriteStateFile(options.state_file, state.ToJson());
  if (!s.ok() && persist_error.ok()) persist_error = s;
}

void CloudEmulator::Impl::Count(const SimRequest& req) {
  counters.calls++;
  counters.calls_by_route[RoutePattern(req)]++;
  // wait and listManagedInstances are POSTs that change nothing.
  const bool read_post = !req.segments.empty() &&
                         (req.segments.back() == "wait" || req.segments.back() == "listManagedInstances");
  if (req.method == "GET" || read_post) return;
  counters.mutating_calls++;
  const auto& s = req.segments;
  if (s.size() >= 3 && s[0] == "v1") {
    counters.mutations_by_project[s[2]]++;
    std::string cluster;
    if (s.size() >= 7 && s[5] == "clusters") cluster = s[6].substr(0, s[6].find(':'));
    else if (s.size() == 6 && s[5] == "clusters" && req.parsed.is_object())
      cluster = req.parsed.value("cluster", json::object()).value("name", "");
    if (!cluster.empty() && s.size() >= 5)
      counters.mutations_by_cluster[s[2] + "/" + s[4] + "/" + cluster]++;
  } else if (s.size() >= 4 && s[0] == "compute") {
    counters.mutations_by_project[s[3]]++;
  }
}

void CloudEmulator::Impl::Record(const SimRequest& req, const SimResponse& res) {
  if (!record.is_open()) return;
  json q = json::object();
  for (const auto& [k, v] : req.query) q[k] = v;
  json line = {{"method", req.method}, {"path", req.path}, {"query", q}, {"userAgent", req.user_agent}, {"timeMs", Now()},
               {"status", res.status}, {"request", req.parsed}, {"response", res.body}};
  record << line.dump() << "\n";
  record.flush();
}

SimResponse CloudEmulator::Impl::Api(const SimRequest& req, bool fail_operation) {
  std::lock_guard<std::mutex> lock(mu);
  AdvanceAndPersist(false);
  SimContext ctx = Context();
  ctx.fail_operation = fail_operation;
  SimResponse res;
  if (!req.segments.empty() && req.segments[0] == "v1") {
    res = HandleGke(ctx, req);
  } else if (req.segments.size() >= 2 && req.segments[0] == "compute" && req.segments[1] == "v1") {
    res = HandleCompute(ctx, req);
  } else {
    res = ErrorResponse(NotFound("The requested URL " + req.path + " was not found on this server."));
  }
  AdvanceAndPersist(ctx.changed);
  CountPeaks(ctx.started_on_clusters);
  Record(req, res);
  return res;
}

// POST …/operations/O/wait: returns when the operation is DONE, or after two
// minutes (as GCE does) with the operation still running.
SimResponse CloudEmulator::Impl::WaitComputeOperation(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (;;) {
    AdvanceAndPersist(false);
    auto it = state.compute_ops.find(key);
    if (it == state.compute_ops.end()) return ErrorResponse(ComputeNotFound(key));
    if (it->second.done || std::chrono::steady_clock::now() >= deadline) {
      SimResponse r;
      r.body = it->second.wire;
      return r;
    }
    const int64_t left = std::max<int64_t>(1, it->second.done_ms - Now());
    cv.wait_for(lock, std::chrono::milliseconds(std::min<int64_t>(left, 100)));
  }
}

namespace {

SimRequest ToSimRequest(const httplib::Request& r) {
  SimRequest s;
  s.method = r.method;
  s.path = r.path;
  s.segments = SplitPath(r.path);
  for (const auto& [k, v] : r.params) s.query.emplace(k, v);
  s.body = r.body;
  s.user_agent = r.get_header_value("User-Agent");
  return s;
}

void Send(const SimResponse& res, httplib::Response& out) {
  out.status = res.status;
  if (!res.body.is_null()) out.set_content(res.body.dump(), "application/json; charset=UTF-8");
}

std::optional<std::string> BearerToken(const httplib::Request& r) {
  const std::string h = r.get_header_value("Authorization");
  if (h.rfind("Bearer ", 0) != 0 || h.size() <= 7) return std::nullopt;
  return h.substr(7);
}

}  // namespace

CloudEmulator::CloudEmulator(CloudEmulatorOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

CloudEmulator::~CloudEmulator() { Stop(); }

namespace {

// The error an injected fault answers with; an empty response for none.
SimResponse FaultResponse(FaultKind kind) {
  switch (kind) {
    case FaultKind::k429:
      return ErrorResponse(TooManyRequests("Too many operations in progress or rate limit exceeded; "
                                           "please retry later."));
    case FaultKind::k500: return ErrorResponse(Internal("Internal error encountered."));
    case FaultKind::k503: return ErrorResponse(Unavailable("The service is currently unavailable."));
    case FaultKind::kQuota:
      return ErrorResponse(PermissionDenied(
          "Insufficient regional quota to satisfy request: resource \"TPUS\": request requires "
          "more than the available quota.", "quotaExceeded"));
    case FaultKind::kDrop:
    case FaultKind::kNone: break;
  }
  return {};
}

}  // namespace

// The state file's contents, when there is one.
Status CloudEmulator::Impl::Load() {
  Impl& m = *this;
  if (!m.options.state_file.empty()) {
    auto loaded = ReadStateFile(m.options.state_file);
    if (!loaded.ok()) return loaded.status();
    if (loaded->has_value()) {
      try {
        m.state = CloudState::FromJson(**loaded);
      } catch (const json::exception& e) {
        return Status::IoError(m.options.state_file + ": not an emulator state: " + e.what());
      }
    }
  }
  m.state.capacity.Apply(m.options.capacity);
  if (Status s = m.faults.Configure(m.options.faults); !s.ok()) return s;
  if (!m.options.record_file.empty()) {
    m.record.open(m.options.record_file, std::ios::app);
    if (!m.record) return Status::IoError(m.options.record_file + ": cannot open for writing");
  }
  return Status::OK();
}

// Counts the request, checks its token and decides its fault; false once it
// has been answered (no or a wrong token).
bool CloudEmulator::Impl::Admit(const SimRequest& req, const httplib::Request& hreq, httplib::Response& hres,
                                FaultDecision* fault) {
  Impl& m = *this;
  std::lock_guard<std::mutex> lock(m.mu);
  m.Count(req);
  auto token = BearerToken(hreq);
  if (!token || (!m.options.required_token.empty() && *token != m.options.required_token)) {
    SimResponse r = ErrorResponse(Unauthenticated());
    if (token) {
      r = ErrorResponse(ApiError{401, "UNAUTHENTICATED", "authError",
                                 "Request had invalid authentication credentials. Expected "
                                 "OAuth 2 access token, login cookie or other valid "
                                 "authentication credential."});
    }
    m.Record(req, r);
    Send(r, hres);
    return false;
  }
  *fault = m.faults.Decide(req.method, req.path, req.body);
  return true;
}

void CloudEmulator::Impl::Handle(const httplib::Request& hreq, httplib::Response& hres) {
  Impl& m = *this;
  SimRequest req = ToSimRequest(hreq);
  if (!req.body.empty()) {
    req.parsed = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  }
  if (!req.segments.empty() && req.segments[0] == "sim") {
    if (req.parsed.is_discarded()) req.parsed = nullptr;
    Send(m.Control(req), hres);
    return;
  }
  FaultDecision fault;
  if (!Admit(req, hreq, hres, &fault)) return;
  const int delay = m.options.request_latency_ms + fault.delay_ms;
  if (delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  if (fault.kind == FaultKind::kDrop) {
    // Headers go out, then the body provider fails and the server closes
    // the connection: the client sees a truncated response.
    hres.status = 200;
    hres.set_content_provider(64, "application/json", [](size_t, size_t, httplib::DataSink&) { return false; });
    return;
  }
  SimResponse res = FaultResponse(fault.kind);
  if (fault.kind == FaultKind::kNone) {
    if (req.parsed.is_discarded()) {
      res = ErrorResponse(BadRequest("Invalid JSON payload received. Unexpected token."));
    } else {
      const std::string wait_key =
          req.method == "POST" && !req.segments.empty() && req.segments.back() == "wait"
              ? ComputeOperationKey(req) : "";
      if (!wait_key.empty()) {
        res = m.WaitComputeOperation(wait_key);
        std::lock_guard<std::mutex> lock(m.mu);
        m.Record(req, res);
      } else {
        res = m.Api(req, fault.fail_operation);
      }
    }
  } else {
    std::lock_guard<std::mutex> lock(m.mu);
    m.Record(req, res);
  }
  Send(res, hres);}

Status CloudEmulator::Start() {
  Impl& m = *impl_;
  if (m.server) return Status::FailedPrecondition("emulator already started");
  if (Status s = m.Load(); !s.ok()) return s;
  m.server = std::make_unique<httplib::Server>();
  httplib::Server& svr = *m.server;
  // A connection holds a worker while it is kept alive, and Compute `wait`
  // calls hold one for up to two minutes: size the pool for both.
  // Threads as connections need them, none kept idle: embedded in `watch
  // --cloud sim`, a fixed pool was most of an idle daemon's threads. Up to
  // 512, room for two clients as wide as ours (256 connections to one host,
  // http/curl_multi.h): the emulator speaks
  // HTTP/1.1, a request per connection at a time, where Google's front ends
  // multiplex a hundred on each HTTP/2 connection.
  svr.new_task_queue = [] { return new ElasticTaskQueue(512); };
  svr.set_keep_alive_max_count(1000);
  // Clients pool idle connections (node's agent, libcurl); closing them after
  // httplib's default 5 s makes a client that reuses one see "socket hang up"
  // on a POST it cannot safely retry. Google's front ends keep them longer.
  svr.set_keep_alive_timeout(30);
  // httplib writes a response's headers and body apart; with Nagle on, the
  // body waits for the client's delayed ACK of the headers: 40 ms a request
  // on a kept-alive connection, which Google's front ends never cost (a
  // 23,000-GET refresh took 105 s instead of 10, docs/emulator.md).
  svr.set_tcp_nodelay(true);
  auto handler = [&m](const httplib::Request& hreq, httplib::Response& hres) { m.Handle(hreq, hres); };
  svr.Get(R"(/.*)", handler);
  svr.Post(R"(/.*)", handler);
  svr.Put(R"(/.*)", handler);
  svr.Patch(R"(/.*)", handler);
  svr.Delete(R"(/.*)", handler);

  auto deepen_backlog = DeepenListenBacklog(svr);
  if (m.options.port == 0) {
    m.port = svr.bind_to_any_port(m.options.host);
  } else {
    m.port = svr.bind_to_port(m.options.host, m.options.port) ? m.options.port : -1;
  }
  if (m.port <= 0) {
    m.server.reset();
    return Status::Unavailable("cannot listen on " + m.options.host + ":" +
                               std::to_string(m.options.port));
  }
  deepen_backlog();
  m.thread = std::thread([&svr] { svr.listen_after_bind(); });
  // httplib ignores a stop() that comes before its accept loop runs, so Start
  // returns only once the server is running: Stop() right after Start() works.
  for (int i = 0; i < 5000 && !svr.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Status::OK();
}

void CloudEmulator::Stop() {
  Impl& m = *impl_;
  if (!m.server) return;
  m.server->stop();
  if (m.thread.joinable()) m.thread.join();
  m.server.reset();
}

int CloudEmulator::port() const { return impl_->port; }

std::string CloudEmulator::endpoint() const {
  return "http://" + impl_->options.host + ":" + std::to_string(impl_->port);
}

Status CloudEmulator::EnsureCluster(const std::string& project, const std::string& location,
                                    const std::string& name,
                                    std::optional<std::string> release_channel) {
  if (project.empty() || location.empty() || name.empty() || location == "-")
    return Status::InvalidArgument("EnsureCluster: project, location and name are required");
  std::lock_guard<std::mutex> lock(impl_->mu);
  SimContext ctx = impl_->Context();
  json cluster = json::object();
  if (release_channel) cluster["releaseChannel"] = {{"channel", *release_channel}};
  EnsureGkeCluster(ctx, project, location, name, cluster);
  impl_->AdvanceAndPersist(ctx.changed);
  return Status::OK();
}

CloudCounters CloudEmulator::counters() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->counters;
}

void CloudEmulator::ResetCounters() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->counters = CloudCounters{};
}

void CloudEmulator::SetZoneCapacity(const std::string& zone, const std::string& accelerator,
                                    int64_t chips) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->state.capacity.SetZoneChips(zone, accelerator, chips);
  impl_->AdvanceAndPersist(true);
}

void CloudEmulator::SetCapacity(const json& config) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->state.capacity.Apply(config);
  impl_->AdvanceAndPersist(true);
}

Status CloudEmulator::SetFaults(const FaultConfig& faults) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->faults.Configure(faults);
}

Status CloudEmulator::ReclaimSpot(const std::string& zone, const std::string& project,
                                  const std::string& location, const std::string& cluster,
                                  const std::string& pool) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  json body = {{"zone", zone}, {"project", project}, {"location", location},
               {"cluster", cluster}, {"nodePool", pool}};
  return impl_->ReclaimLocked(body);
}

json CloudEmulator::StateSnapshot() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->AdvanceAndPersist(false);
  return impl_->state.ToJson();
}

}  // namespace tpu::sim
