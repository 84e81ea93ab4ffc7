// ApiCaller: token, headers, counting and error parsing around one HTTP call.
#include "cloud/api_caller.h"

#include <cctype>
#include <cstdio>

namespace tpu::cloud {

void CallCounter::Record(const std::string& method, int http_status, bool read) {
  (read ? reads_ : mutations_).fetch_add(1);
  std::lock_guard<std::mutex> lock(mu_);
  ++by_method_code_[method + " " + std::to_string(http_status)];
}

std::map<std::string, int64_t> CallCounter::ByMethodAndCode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_method_code_;
}

void CallCounter::Reset() {
  reads_ = 0;
  mutations_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  by_method_code_.clear();
}

std::string CallName(const std::string& method, const std::string& url) {
  auto p = url.find("/projects/");
  std::string path = p == std::string::npos ? url : url.substr(p + 1);
  auto q = path.find('?');
  if (q != std::string::npos) path = path.substr(0, q);
  return method + " " + path;
}

std::string UrlEncode(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace {

// Compute's instanceGroupManagers.listManagedInstances is a POST that only reads.
bool ReadOnly(const std::string& method, const std::string& call) {
  return method == "GET" || call.ends_with("/listManagedInstances");
}

}  // namespace

ApiResult<nlohmann::json> ApiCaller::Call(const std::string& method, const std::string& url,
                                          const std::optional<nlohmann::json>& body) {
  return SendPrepared(Prepare(method, url, body));
}

ApiResult<std::string> ApiCaller::CallRaw(const std::string& url) { return SendPrepared(PrepareRaw(url)); }

Prepared<std::string> ApiCaller::PrepareRaw(const std::string& url) {
  return Then<std::string>(PrepareExchange("GET", url, std::nullopt),
                           std::function<ApiResult<std::string>(ApiResult<http::HttpResponse>)>(
                               [](ApiResult<http::HttpResponse> response) -> ApiResult<std::string> {
                                 if (!response.ok()) return response.error();
                                 return std::move(response->body);
                               }));
}

Prepared<nlohmann::json> ApiCaller::Prepare(const std::string& method, const std::string& url,
                                            const std::optional<nlohmann::json>& body) {
  std::optional<std::string> text;
  if (body) text = body->dump();
  return Then<nlohmann::json>(
      PrepareExchange(method, url, text),
      std::function<ApiResult<nlohmann::json>(ApiResult<http::HttpResponse>)>(
          [call = CallName(method, url)](ApiResult<http::HttpResponse> response) -> ApiResult<nlohmann::json> {
            if (!response.ok()) return response.error();
            if (response->body.empty()) return nlohmann::json::object();
            auto j = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
            if (j.is_discarded()) {
              ApiError e;
              e.call = call;
              e.http_status = response->status;
              e.parse_error = true;
              e.message = "response is not JSON";
              return e;
            }
            return j;
          }));
}

Prepared<http::HttpResponse> ApiCaller::PrepareExchange(const std::string& method, const std::string& url,
                                                        const std::optional<std::string>& body) {
  std::string call = CallName(method, url);
  const bool read = ReadOnly(method, call);
  http::HttpRequest request;
  request.method = method;
  request.url = url;
  auto token = tokens_->Token();
  if (!token.ok()) return ApiErrorFromTransport(call, token.status().WithContext("credentials"));
  if (!token->empty()) request.headers.emplace_back("Authorization", "Bearer " + *token);
  request.headers.emplace_back("Accept", "application/json");
  if (body) {
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = *body;
  }
  auto finish = [counter = counter_, method, read, call = std::move(call)](
                    Result<http::HttpResponse> response) -> ApiResult<http::HttpResponse> {
    if (!response.ok()) {
      if (counter) counter->Record(method, 0, read);
      return ApiErrorFromTransport(call, response.status());
    }
    if (counter) counter->Record(method, response->status, read);
    if (response->status < 200 || response->status >= 300) return ApiErrorFromResponse(call, *response);
    return std::move(*response);
  };
  return PreparedCall<http::HttpResponse>{transport_, std::move(request), std::move(finish)};
}

}  // namespace tpu::cloud
