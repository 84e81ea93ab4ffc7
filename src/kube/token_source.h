// Where the bearer token of each request comes from: a fixed string, a file
// that is re-read as it rotates (the service account token kubelet projects),
// or an exec credential plugin (gke-gcloud-auth-plugin and the like).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "kube/timestamps.h"

namespace tpu::kube {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual Result<std::string> Token() = 0;
  // The server rejected the last token (401): the next Token() fetches anew.
  virtual void Invalidate() {}
};

class StaticTokenSource : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  Result<std::string> Token() override { return token_; }

 private:
  std::string token_;
};

// Reads the file on every request: kubelet rewrites projected tokens well
// before they expire, and a small read is cheaper than serving a stale token.
class FileTokenSource : public TokenSource {
 public:
  explicit FileTokenSource(std::string path, const Env& env = Env::Default())
      : path_(std::move(path)), env_(env) {}
  Result<std::string> Token() override;

 private:
  std::string path_;
  const Env& env_;
};

// users[].user.exec of a kubeconfig.
struct ExecConfig {
  std::string api_version = "client.authentication.k8s.io/v1";
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

// Runs the plugin and caches its ExecCredential until status.expirationTimestamp
// (or forever when absent), or until Invalidate(). Thread-safe.
class ExecTokenSource : public TokenSource {
 public:
  ExecTokenSource(ExecConfig config, Clock& clock) : config_(std::move(config)), clock_(clock) {}
  Result<std::string> Token() override;
  void Invalidate() override;
  int runs() const { return runs_; }

 private:
  ExecConfig config_;
  Clock& clock_;
  std::mutex mu_;
  std::optional<std::string> token_;
  std::optional<WallTime> expiry_;
  int runs_ = 0;
};

// Runs argv[0] (found on PATH) with `extra_env` added, and returns its stdout;
// a non-zero exit is an error that carries its stderr.
Result<std::string> RunCapture(const std::vector<std::string>& argv,
                               const std::vector<std::pair<std::string, std::string>>& extra_env);

}  // namespace tpu::kube
