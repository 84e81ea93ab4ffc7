// RestClient: the REST verbs of the Kubernetes API over the one HTTP transport.
#include "kube/rest_client.h"

#include "http/curl_transport.h"
#include "kube/status_errors.h"

namespace tpu::kube {

std::string QueryEscape(const std::string& value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

namespace {

http::CurlTransportOptions TransportOptions(const RestConfig& config) {
  http::CurlTransportOptions options;
  options.insecure = config.insecure_skip_tls_verify;
  options.ca_file = config.ca_file;
  options.ca_pem = config.ca_pem;
  options.client_cert_file = config.client_cert_file;
  options.client_key_file = config.client_key_file;
  options.client_cert_pem = config.client_cert_pem;
  options.client_key_pem = config.client_key_pem;
  options.user_agent = config.user_agent;
  return options;
}

}  // namespace

RestClient::RestClient(RestConfig config)
    : config_(std::move(config)), transport_(std::make_unique<http::CurlTransport>(TransportOptions(config_))) {}

RestClient::~RestClient() = default;

Result<RestClient::Answer> RestClient::SendOnce(const Request& req) {
  http::HttpRequest request;
  request.method = req.method;
  request.url = config_.server + req.path;
  request.body = req.body;
  request.headers.emplace_back("Accept", "application/json");
  if (!req.content_type.empty()) request.headers.emplace_back("Content-Type", req.content_type);
  if (config_.token) {
    auto token = config_.token->Token();
    if (!token.ok()) return token.status();
    // The token is never logged; it only goes into this header.
    request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  request.on_chunk = req.on_chunk;
  request.cancel = req.cancel;
  auto response = transport_->Send(request);
  if (!response.ok()) return response.status();
  return Answer{response->status, std::move(response->body), response->cancelled};
}

Result<RestClient::Answer> RestClient::Send(const Request& req) {
  auto a = SendOnce(req);
  if (a.ok() && !a->cancelled && a->code == 401 && config_.token) {
    config_.token->Invalidate();
    a = SendOnce(req);
  }
  return a;
}

Result<json> RestClient::Do(const Request& req) {
  auto a = Send(req);
  if (!a.ok()) return a.status();
  const std::string context = req.method + " " + req.path;
  if (a->code < 200 || a->code >= 300) return ErrorFromResponse(a->code, a->body, context);
  auto parsed = json::parse(a->body, nullptr, false);
  if (parsed.is_discarded()) return Status::Internal(context + ": the answer is not JSON");
  return parsed;
}

Result<json> RestClient::Get(const ResourceRef& ref, const std::string& ns, const std::string& name) {
  return Do({"GET", ref.Path(ns, name), "", "", nullptr});
}

Result<ObjectList> RestClient::List(const ResourceRef& ref, const std::string& ns,
                                    const ListOptions& options) {
  ObjectList out;
  std::string cont;
  bool restarted = false;
  for (;;) {
    std::string q = "?limit=" + std::to_string(options.page_size);
    if (!options.label_selector.empty()) q += "&labelSelector=" + QueryEscape(options.label_selector);
    if (!options.field_selector.empty()) q += "&fieldSelector=" + QueryEscape(options.field_selector);
    if (!cont.empty()) q += "&continue=" + QueryEscape(cont);
    auto page = Do({"GET", ref.Path(ns) + q, "", "", nullptr});
    if (!page.ok()) {
      // A continue token outlived the history: start over once, as client-go's pager does.
      if (IsGone(page.status()) && !cont.empty() && !restarted) {
        restarted = true;
        cont.clear();
        out.items.clear();
        continue;
      }
      return page.status();
    }
    for (auto& item : (*page)["items"]) out.items.push_back(std::move(item));
    const json& meta = (*page)["metadata"];
    if (out.resource_version.empty() || cont.empty()) {
      out.resource_version = meta.value("resourceVersion", "");
    }
    cont = meta.value("continue", "");
    if (cont.empty()) return out;
  }
}

Result<json> RestClient::Create(const ResourceRef& ref, const std::string& ns, const json& obj) {
  return Do({"POST", ref.Path(ns) + "?fieldManager=" + std::string(kFieldManager), obj.dump(),
             "application/json", nullptr});
}

Result<json> RestClient::Update(const ResourceRef& ref, const std::string& ns, const json& obj) {
  std::string name = obj["metadata"].value("name", "");
  return Do({"PUT", ref.Path(ns, name) + "?fieldManager=" + std::string(kFieldManager), obj.dump(),
             "application/json", nullptr});
}

Result<json> RestClient::MergePatch(const ResourceRef& ref, const std::string& ns,
                                    const std::string& name, const json& patch,
                                    const std::string& subresource) {
  return Do({"PATCH", ref.Path(ns, name, subresource) + "?fieldManager=" + std::string(kFieldManager),
             patch.dump(), "application/merge-patch+json", nullptr});
}

Result<json> RestClient::Apply(const ResourceRef& ref, const std::string& ns, const json& obj,
                               const ApplyOptions& options) {
  std::string name = obj.contains("metadata") ? obj["metadata"].value("name", "") : "";
  if (name.empty()) return Status::InvalidArgument("apply: metadata.name is required");
  std::string q = "?fieldManager=" + QueryEscape(options.field_manager);
  if (options.force) q += "&force=true";
  // JSON is YAML, so the apply content type takes it as it is.
  return Do({"PATCH", ref.Path(ns, name, options.subresource) + q, obj.dump(),
             "application/apply-patch+yaml", nullptr});
}

Status RestClient::Delete(const ResourceRef& ref, const std::string& ns, const std::string& name) {
  auto r = Do({"DELETE", ref.Path(ns, name), "", "", nullptr});
  return r.ok() ? Status::OK() : r.status();
}

Status RestClient::Watch(const ResourceRef& ref, const std::string& ns, const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event) {
  std::string q = "?watch=true&timeoutSeconds=" + std::to_string(options.timeout_seconds);
  if (options.allow_bookmarks) q += "&allowWatchBookmarks=true";
  if (!options.resource_version.empty()) q += "&resourceVersion=" + QueryEscape(options.resource_version);
  if (!options.label_selector.empty()) q += "&labelSelector=" + QueryEscape(options.label_selector);
  if (!options.field_selector.empty()) q += "&fieldSelector=" + QueryEscape(options.field_selector);
  const std::string context = "watch " + ref.Path(ns);
  std::string buffer;
  Status stream_error;
  auto on_chunk = [&](const char* data, size_t n) {
    buffer.append(data, n);
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.empty()) continue;
      auto event = json::parse(line, nullptr, false);
      if (event.is_discarded() || !event.contains("type")) {
        stream_error = Status::Internal(context + ": malformed watch event");
        return false;
      }
      if (event["type"] == "ERROR") {
        stream_error = ErrorFromStatusObject(event["object"], context);
        return false;
      }
      if (!on_event({event["type"].get<std::string>(), event["object"]})) return false;
    }
    return true;
  };
  auto a = Send({"GET", ref.Path(ns) + q, "", "", on_chunk, options.cancel});
  if (!a.ok()) return a.status();
  if (a->cancelled) return Status::OK();
  if (a->code != 200) return ErrorFromResponse(a->code, a->body, context);
  return stream_error;
}

Result<std::vector<std::string>> RestClient::ServedVersions(const std::string& group) {
  auto groups = Do({"GET", "/apis", "", "", nullptr});
  if (!groups.ok()) return groups.status();
  std::vector<std::string> out;
  for (const auto& g : (*groups)["groups"]) {
    if (g.value("name", "") != group) continue;
    std::string preferred = g.contains("preferredVersion") ? g["preferredVersion"].value("version", "") : "";
    if (!preferred.empty()) out.push_back(preferred);
    for (const auto& v : g["versions"]) {
      std::string version = v.value("version", "");
      if (version != preferred) out.push_back(version);
    }
  }
  return out;
}

Result<std::vector<std::string>> RestClient::ServedResources(const std::string& group,
                                                             const std::string& version) {
  auto list = Do({"GET", (group.empty() ? "/api/" : "/apis/" + group + "/") + version, "", "", nullptr});
  if (!list.ok()) {
    if (IsNotFound(list.status())) return std::vector<std::string>{};
    return list.status();
  }
  std::vector<std::string> out;
  for (const auto& r : (*list).value("resources", json::array())) {
    std::string name = r.value("name", "");
    if (!name.empty() && name.find('/') == std::string::npos) out.push_back(name);
  }
  return out;
}

}  // namespace tpu::kube
