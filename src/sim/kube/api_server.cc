// HTTP routing for the Kubernetes API emulator: discovery, the resource paths
// (/api/v1/..., /apis/<group>/<version>/..., namespaced or cluster-scoped),
// and watch streams. The object semantics live in Store.
#include "sim/kube/api_server.h"

#include <httplib.h>

#include <map>
#include <set>

#include "sim/kube/bootstrap_tokens.h"
#include "sim/kube/selector.h"

namespace tpu::kubesim {
namespace {

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.code;
  res.set_content(reply.body.dump(), "application/json");
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// The default field manager of an update: the user agent's program name, as
// the API server derives it.
std::string ManagerOf(const httplib::Request& req) {
  if (req.has_param("fieldManager")) return req.get_param_value("fieldManager");
  std::string agent = req.get_header_value("User-Agent");
  return agent.substr(0, agent.find('/'));
}

}  // namespace

KubeApiServer::KubeApiServer(Options options)
    : options_(std::move(options)), store_(options_.history_limit) {
  types_ = BuiltinTypes();
  if (!options_.kueue_release.empty()) {
    for (auto& t : KueueReleaseTypes(options_.kueue_release)) types_.push_back(std::move(t));
  } else {
    for (const auto& v : options_.kueue_versions) {
      for (auto& t : KueueTypes(v)) types_.push_back(std::move(t));
    }
  }
  if (options_.jobset) {
    for (auto& t : JobSetTypes()) types_.push_back(std::move(t));
  }
  if (options_.provisioning_requests) {
    for (auto& t : ProvisioningRequestTypes()) types_.push_back(std::move(t));
  }
}

KubeApiServer::~KubeApiServer() { Stop(); }

void KubeApiServer::Serve(ResourceType type) { types_.push_back(std::move(type)); }

const ResourceType* KubeApiServer::Find(const std::string& group, const std::string& version,
                                        const std::string& resource) const {
  for (const auto& t : types_) {
    if (t.group == group && t.version == version && t.resource == resource) return &t;
  }
  return nullptr;
}

Status KubeApiServer::Start(int port) {
  server_ = std::make_unique<httplib::Server>();
  // Each open watch holds a thread for as long as it streams.
  server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  // No Nagle: a response's body would wait for the client's delayed ACK of
  // its headers (sim/cloud_emulator.cc says more).
  server_->set_tcp_nodelay(true);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { Route(req, res); };
  for (const char* pattern : {R"(/api(/.*)?)", R"(/apis(/.*)?)", R"(/version)"}) {
    server_->Get(pattern, handler);
    server_->Post(pattern, handler);
    server_->Put(pattern, handler);
    server_->Patch(pattern, handler);
    server_->Delete(pattern, handler);
  }
  if (port == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ < 0) return Status::IoError("kubesim: cannot bind a loopback port");
  } else {
    if (!server_->bind_to_port("127.0.0.1", port)) {
      return Status::IoError("kubesim: cannot bind 127.0.0.1:" + std::to_string(port));
    }
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // bind_to_port already listens, so connections queue until the loop runs.
  return Status::OK();
}

void KubeApiServer::Stop() {
  if (!server_) return;
  store_.Shutdown();  // ends open watches, which hold server threads
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

int KubeApiServer::OpenWatches(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(watches_mu_);
  auto it = open_watches_.find(resource);
  return it == open_watches_.end() ? 0 : it->second;
}

int KubeApiServer::ListCalls(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(watches_mu_);
  auto it = list_calls_.find(resource);
  return it == list_calls_.end() ? 0 : it->second;
}

void KubeApiServer::Discovery(const httplib::Request& req, httplib::Response& res) {
  const auto segs = Split(req.path);
  if (segs.size() == 1 && segs[0] == "version") {
    Send(res, {200, {{"major", "1"}, {"minor", "31"}, {"gitVersion", "v1.31.0-kubesim"}}});
    return;
  }
  if (segs.size() == 1 && segs[0] == "api") {
    Send(res, {200, {{"kind", "APIVersions"}, {"versions", {"v1"}}}});
    return;
  }
  if (segs.size() == 1 && segs[0] == "apis") {
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& t : types_) {
      if (t.group.empty()) continue;
      auto& versions = groups[t.group];
      if (std::find(versions.begin(), versions.end(), t.version) == versions.end()) {
        versions.push_back(t.version);
      }
    }
    json list = json::array();
    for (const auto& [group, versions] : groups) {
      json vs = json::array();
      for (const auto& v : versions) vs.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
      list.push_back({{"name", group}, {"versions", vs}, {"preferredVersion", vs[0]}});
    }
    Send(res, {200, {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}}});
    return;
  }
  // /api/v1 or /apis/<group>/<version>: the APIResourceList.
  std::string group = segs[0] == "api" ? "" : segs[1];
  std::string version = segs.back();
  json resources = json::array();
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    json verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
    resources.push_back({{"name", t.resource}, {"singularName", ""}, {"namespaced", t.namespaced},
                         {"kind", t.kind}, {"verbs", verbs}});
    if (t.status_subresource) {
      resources.push_back({{"name", t.resource + "/status"}, {"singularName", ""},
                           {"namespaced", t.namespaced}, {"kind", t.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (resources.empty()) {
    Send(res, StatusReply(404, "NotFound", "the server could not find the requested resource"));
    return;
  }
  std::string gv = group.empty() ? version : group + "/" + version;
  Send(res, {200, {{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", gv},
                   {"resources", resources}}});
}

// The resource a path names: "/api/v1[/namespaces/NS]/RESOURCE[/NAME[/status]]"
// or "/apis/GROUP/VERSION/…". False once it has answered (discovery, 404, 405).
bool KubeApiServer::Resolve(const httplib::Request& req, httplib::Response& res, Target* target) {
  const auto segs = Split(req.path);
  // Where the resource part of the path starts: after /api/v1 or /apis/g/v.
  size_t base = segs.size() && segs[0] == "api" ? 2 : 3;
  if (segs.size() <= base) {
    if (req.method == "GET") Discovery(req, res);
    else Send(res, StatusReply(405, "MethodNotAllowed", "the server does not allow this method"));
    return false;
  }
  std::string group = segs[0] == "api" ? "" : segs[1];
  std::string version = segs[base - 1];
  std::vector<std::string> rest(segs.begin() + base, segs.end());
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    target->type = Find(group, version, rest[2]);
    if (target->type && target->type->namespaced) {
      target->ns = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    } else {
      target->type = nullptr;
    }
  }
  if (!target->type) target->type = Find(group, version, rest[0]);
  if (!target->type || rest.size() > 3 || (rest.size() == 3 && rest[2] != "status")) {
    Send(res, StatusReply(404, "NotFound", "the server could not find the requested resource"));
    return false;
  }
  const ResourceType& type = *target->type;
  if (rest.size() >= 2) target->name = rest[1];
  if (rest.size() == 3) target->subresource = rest[2];
  if (target->subresource == "status" && !type.status_subresource) {
    Send(res, StatusReply(404, "NotFound", "the server could not find the requested resource"));
    return false;
  }
  return true;
}

void KubeApiServer::List(const httplib::Request& req, httplib::Response& res, const Target& target) {
  const ResourceType& type = *target.type;
  {
    std::lock_guard<std::mutex> lock(watches_mu_);
    ++list_calls_[type.resource];
  }
  ListOptions lo;
  lo.label_selector = req.get_param_value("labelSelector");
  lo.field_selector = req.get_param_value("fieldSelector");
  if (req.has_param("limit")) lo.limit = std::atoll(req.get_param_value("limit").c_str());
  lo.continue_token = req.get_param_value("continue");
  Send(res, store_.List(type, target.ns, lo));
}

bool KubeApiServer::WriteCurrentState(const ResourceType& type, const std::string& ns, const std::string& labels,
                                      const std::string& fields, uint64_t* after, httplib::DataSink& sink) {
  Reply list = store_.List(type, ns, {labels, fields, 0, ""});
  for (auto& item : list.body["items"]) {
    std::string line = json{{"type", "ADDED"}, {"object", item}}.dump() + "\n";
    if (!sink.write(line.data(), line.size())) return false;
  }
  *after = std::stoull(list.body["metadata"]["resourceVersion"].get<std::string>());
  return true;
}

// A watch: a chunked stream of JSON events, one per line.
void KubeApiServer::Watch(const httplib::Request& req, httplib::Response& res, const Target& target) {
  const ResourceType& type = *target.type;
  // Counted open from here until httplib drops the provider (the stream's end).
  struct WatchState {
    WatchState(KubeApiServer* s, std::string r) : server(s), resource(std::move(r)) {
      std::lock_guard<std::mutex> lock(server->watches_mu_);
      ++server->open_watches_[resource];
    }
    KubeApiServer* server;
    std::string resource;
    bool started = false;
    uint64_t after = 0;
    std::chrono::steady_clock::time_point deadline;
    ~WatchState() {
      std::lock_guard<std::mutex> lock(server->watches_mu_);
      --server->open_watches_[resource];
    }
  };
  auto state = std::make_shared<WatchState>(this, type.resource);
  const std::string rv = req.get_param_value("resourceVersion");
  const bool bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  const std::string labels = req.get_param_value("labelSelector"), fields = req.get_param_value("fieldSelector");
  long timeout = req.has_param("timeoutSeconds") ? std::atol(req.get_param_value("timeoutSeconds").c_str()) : 1800;
  state->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  const ResourceType* tp = target.type;
  const std::string ns = target.ns;
  res.set_chunked_content_provider(
      "application/json",
      [this, state, rv, bookmarks, labels, fields, tp, ns](size_t, httplib::DataSink& sink) {
        auto write = [&sink](const json& event) {
          std::string line = event.dump() + "\n";
          return sink.write(line.data(), line.size());
        };
        auto matches = [&](const json& obj) {
          std::string error;
          return MatchesLabels(obj, labels, &error) && MatchesFields(obj, fields, &error);
        };
        if (!state->started) {
          state->started = true;
          // No start version: the current state as ADDED events first.
          if (rv.empty() || rv == "0") return WriteCurrentState(*tp, ns, labels, fields, &state->after, sink);
          state->after = std::strtoull(rv.c_str(), nullptr, 10);
        }
        // Waits at most until the deadline, but reports events or 410 first.
        auto now = std::chrono::steady_clock::now();
        auto until = std::min(state->deadline, now + options_.bookmark_interval);
        WatchBatch batch = store_.WaitEvents(*tp, ns, state->after, until);
        if (batch.gone) {
          write({{"type", "ERROR"},
                 {"object", StatusReply(410, "Expired",
                                        "too old resource version: " +
                                            std::to_string(state->after))
                                .body}});
          sink.done();
          return true;
        }
        if (batch.shutdown) {
          sink.done();
          return true;
        }
        for (const auto& e : batch.events) {
          state->after = e.resource_version;
          if (!matches(e.object)) continue;
          if (!write({{"type", e.type}, {"object", e.object}})) return false;
        }
        if (batch.events.empty()) {
          state->after = std::max(state->after, batch.resource_version);
          if (bookmarks) {
            json mark = {{"kind", tp->kind}, {"apiVersion", tp->ApiVersion()},
                         {"metadata", {{"resourceVersion", std::to_string(state->after)}}}};
            if (!write({{"type", "BOOKMARK"}, {"object", mark}})) return false;
          }
        }
        if (std::chrono::steady_clock::now() >= state->deadline) {
          sink.done();
          return true;
        }
        return sink.is_writable();
      });
}

// A joining node's bootstrap token, else the configured check, decides who may call.
bool KubeApiServer::Authorize(const httplib::Request& req, httplib::Response& res) {
  const std::string authorization = req.get_header_value("Authorization");
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
  switch (CheckBootstrapToken(store_, *Find("", "v1", "secrets"), authorization, now_s)) {
    case BootstrapAuth::kValid:
      if (BootstrapMayCall(req.method, req.path)) return true;
      Send(res, StatusReply(403, "Forbidden", "bootstrap tokens may only register a Node"));
      return false;
    case BootstrapAuth::kInvalid:
      Send(res, StatusReply(401, "Unauthorized", "Unauthorized"));
      return false;
    case BootstrapAuth::kNotBootstrap:
      break;
  }
  if (options_.authorize && !options_.authorize(authorization)) {
    Send(res, StatusReply(401, "Unauthorized", "Unauthorized"));
    return false;
  }
  return true;
}

void KubeApiServer::Route(const httplib::Request& req, httplib::Response& res) {
  if (!Authorize(req, res)) return;
  if (int code = options_.fail ? options_.fail(req.method, req.path, req.body) : 0) {
    Send(res, StatusReply(code, "InternalError", "injected fault"));
    return;
  }
  Target target;
  if (!Resolve(req, res, &target)) return;
  json body;
  if (req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    // Apply bodies are YAML; JSON is YAML, and it is what we accept.
    body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
      Send(res, StatusReply(400, "BadRequest", "the request body is not valid JSON"));
      return;
    }
    if (target.type->resource == "secrets" && target.type->group.empty()) NormalizeSecret(body);
  }
  if (req.method == "GET" && target.name.empty()) {
    bool watch = req.get_param_value("watch") == "true" || req.get_param_value("watch") == "1";
    return watch ? Watch(req, res, target) : List(req, res, target);
  }
  Write(req, res, target, body);
}

// GET of one object, and every write: create, update, delete, merge patch and
// server-side apply.
void KubeApiServer::Write(const httplib::Request& req, httplib::Response& res, const Target& target, const json& body) {
  const ResourceType& type = *target.type;
  WriteContext w{ManagerOf(req), target.subresource};
  if (req.method == "GET") return Send(res, store_.Get(type, target.ns, target.name));
  if (req.method == "POST" && target.name.empty() && target.subresource.empty()) {
    if (body.is_object() && body.contains("metadata") && type.namespaced &&
        body["metadata"].contains("namespace") && body["metadata"]["namespace"] != target.ns) {
      return Send(res, StatusReply(400, "BadRequest",
                                   "the namespace of the provided object does not match the "
                                   "namespace sent on the request"));
    }
    return Send(res, store_.Create(type, target.ns, body, w));
  }
  if (target.name.empty()) {
    return Send(res, StatusReply(405, "MethodNotAllowed", "the server does not allow this method"));
  }
  if (req.method == "PUT") return Send(res, store_.Update(type, target.ns, target.name, body, w));
  if (req.method == "DELETE") return Send(res, store_.Delete(type, target.ns, target.name));
  if (req.method == "PATCH") {
    std::string content_type = req.get_header_value("Content-Type");
    content_type = content_type.substr(0, content_type.find(';'));
    if (content_type == "application/merge-patch+json") {
      return Send(res, store_.MergePatch(type, target.ns, target.name, body, w));
    }
    if (content_type == "application/apply-patch+yaml") {
      bool force = req.get_param_value("force") == "true";
      if (!req.has_param("fieldManager")) w.field_manager.clear();
      return Send(res, store_.Apply(type, target.ns, target.name, body, force, w));
    }
    return Send(res, StatusReply(415, "UnsupportedMediaType",
                                 "the body of the request was in an unknown format - accepted "
                                 "media types include: application/merge-patch+json, "
                                 "application/apply-patch+yaml"));
  }
  Send(res, StatusReply(405, "MethodNotAllowed", "the server does not allow this method"));
}

}  // namespace tpu::kubesim
