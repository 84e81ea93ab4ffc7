// The libcurl transport of RestClient and the REST verbs on top of it.
#include "kube/rest_client.h"

#include <curl/curl.h>

#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "kube/status_errors.h"

namespace tpu::kube {
namespace {

struct CurlHandle {
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  ~CurlHandle() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
  }
};

struct StreamState {
  CURL* curl;
  std::string* body;
  const std::function<bool(const char*, size_t)>* on_chunk;
  bool stopped = false;
};

size_t OnWrite(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<StreamState*>(user);
  size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
  if (st->on_chunk && *st->on_chunk && code == 200) {
    if (!(*st->on_chunk)(data, len)) {
      st->stopped = true;
      return 0;  // aborts the transfer: the caller stopped watching
    }
    return len;
  }
  st->body->append(data, len);
  return len;
}

// A cancellable transfer opens its sockets through these, so the token can
// shut them down from another thread (the wake-up), and polls the token in the
// progress callback (the clean stop once woken).
curl_socket_t OpenSocket(void* user, curlsocktype, curl_sockaddr* addr) {
  int fd = ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
  if (fd < 0) return CURL_SOCKET_BAD;
  static_cast<CancelToken*>(user)->AddSocket(fd);
  return fd;
}

int CloseSocket(void* user, curl_socket_t fd) {
  static_cast<CancelToken*>(user)->RemoveSocket(fd);
  return ::close(fd);
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<CancelToken*>(user)->cancelled() ? 1 : 0;
}

void SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

}  // namespace

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

RestClient::RestClient(RestConfig config) : config_(std::move(config)) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<RestClient::Answer> RestClient::SendOnce(const Request& req) {
  CurlHandle h;
  if (!h.curl) return Status::Internal("curl_easy_init failed");
  CURL* c = h.curl;
  std::string url = config_.server + req.path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  if (!req.on_chunk) curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, config_.user_agent.c_str());
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
  }
  h.headers = curl_slist_append(h.headers, "Accept: application/json");
  if (!req.content_type.empty()) {
    h.headers = curl_slist_append(h.headers, ("Content-Type: " + req.content_type).c_str());
  }
  if (config_.token) {
    auto token = config_.token->Token();
    if (!token.ok()) return token.status();
    // The token is never logged; it only goes into this header.
    h.headers = curl_slist_append(h.headers, ("Authorization: Bearer " + *token).c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h.headers);
  if (!config_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (!config_.ca_pem.empty()) SetBlob(c, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.client_cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  if (!config_.client_key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  if (!config_.client_cert_pem.empty()) SetBlob(c, CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
  if (!config_.client_key_pem.empty()) SetBlob(c, CURLOPT_SSLKEY_BLOB, config_.client_key_pem);

  Answer answer;
  if (req.cancel) {
    if (req.cancel->cancelled()) {
      answer.cancelled = true;
      return answer;
    }
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, req.cancel);
    curl_easy_setopt(c, CURLOPT_CLOSESOCKETFUNCTION, CloseSocket);
    curl_easy_setopt(c, CURLOPT_CLOSESOCKETDATA, req.cancel);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, req.cancel);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  StreamState st{c, &answer.body, &req.on_chunk};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &answer.code);
  if (req.cancel && req.cancel->cancelled()) {
    answer.cancelled = true;
    return answer;
  }
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && st.stopped)) {
    // A watch the server closed mid-chunk is the end of that stream, not an error.
    if (req.on_chunk && answer.code == 200 && rc == CURLE_PARTIAL_FILE) return answer;
    return Status::Unavailable(req.method + " " + url + ": " + curl_easy_strerror(rc));
  }
  return answer;
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
