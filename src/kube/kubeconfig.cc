// kubeconfig parsing with yaml-cpp, and in-cluster configuration.
#include "kube/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "base/base64.h"

namespace tpu::kube {
namespace {

namespace fs = std::filesystem;

struct Named {
  YAML::Node node;
  std::string dir;  // of the file that defined it, for relative paths
};

struct Merged {
  std::map<std::string, Named> clusters, users, contexts;
  std::string current_context;
};

std::string Str(const YAML::Node& n, const char* key) {
  return n && n[key] && n[key].IsScalar() ? n[key].as<std::string>() : "";
}

std::string Resolve(const std::string& path, const std::string& dir) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(dir) / path).string();
}

bool DecodeInto(const std::string& in, std::string* out) {
  auto decoded = Base64Decode(in);
  if (decoded) *out = std::move(*decoded);
  return decoded.has_value();
}

// NotFound when the file does not exist: kubectl skips missing list entries.
Status MergeFile(const Env& env, const std::string& path, Merged& m) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return text.status().code() == Status::Code::kNotFound ? text.status()
                                                                          : text.status().WithContext("kubeconfig");
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("kubeconfig " + path + ": " + e.what());
  }
  const std::string dir = fs::path(path).parent_path().string();
  auto take = [&](const char* list, const char* item, std::map<std::string, Named>& into) {
    if (!root[list] || !root[list].IsSequence()) return;
    for (const auto& entry : root[list]) {
      std::string name = Str(entry, "name");
      if (!name.empty() && !into.count(name)) into[name] = {entry[item], dir};
    }
  };
  take("clusters", "cluster", m.clusters);
  take("users", "user", m.users);
  take("contexts", "context", m.contexts);
  if (m.current_context.empty()) m.current_context = Str(root, "current-context");
  return Status::OK();
}

}  // namespace

Result<RestConfig> LoadKubeconfig(const std::vector<std::string>& paths, const std::string& context,
                                  Env& env) {
  Merged m;
  bool any = false;
  for (const auto& path : paths) {
    if (path.empty()) continue;
    Status s = MergeFile(env, path, m);
    if (s.code() == Status::Code::kNotFound) continue;
    if (!s.ok()) return s;
    any = true;
  }
  if (!any) return Status::NotFound("no kubeconfig file found in the list");
  const std::string ctx_name = context.empty() ? m.current_context : context;
  if (ctx_name.empty()) return Status::InvalidArgument("kubeconfig: no current-context and none given");
  auto ctx = m.contexts.find(ctx_name);
  if (ctx == m.contexts.end()) return Status::NotFound("kubeconfig: context \"" + ctx_name + "\" not found");
  const std::string cluster_name = Str(ctx->second.node, "cluster");
  auto cluster = m.clusters.find(cluster_name);
  if (cluster == m.clusters.end()) {
    return Status::NotFound("kubeconfig: cluster \"" + cluster_name + "\" of context \"" + ctx_name +
                            "\" not found");
  }
  RestConfig rc;
  const YAML::Node& c = cluster->second.node;
  rc.server = Str(c, "server");
  if (rc.server.empty()) return Status::InvalidArgument("kubeconfig: cluster \"" + cluster_name + "\" has no server");
  rc.ca_file = Resolve(Str(c, "certificate-authority"), cluster->second.dir);
  if (!Str(c, "certificate-authority-data").empty() &&
      !DecodeInto(Str(c, "certificate-authority-data"), &rc.ca_pem)) {
    return Status::InvalidArgument("kubeconfig: certificate-authority-data is not base64");
  }
  rc.insecure_skip_tls_verify = Str(c, "insecure-skip-tls-verify") == "true";
  rc.tls_server_name = Str(c, "tls-server-name");
  std::string ns = Str(ctx->second.node, "namespace");
  if (!ns.empty()) rc.default_namespace = ns;

  const std::string user_name = Str(ctx->second.node, "user");
  auto user = m.users.find(user_name);
  if (user == m.users.end()) return rc;  // anonymous
  const YAML::Node& u = user->second.node;
  const std::string& dir = user->second.dir;
  rc.client_cert_file = Resolve(Str(u, "client-certificate"), dir);
  rc.client_key_file = Resolve(Str(u, "client-key"), dir);
  if ((!Str(u, "client-certificate-data").empty() &&
       !DecodeInto(Str(u, "client-certificate-data"), &rc.client_cert_pem)) ||
      (!Str(u, "client-key-data").empty() && !DecodeInto(Str(u, "client-key-data"), &rc.client_key_pem))) {
    return Status::InvalidArgument("kubeconfig: user \"" + user_name + "\": client data is not base64");
  }
  if (!Str(u, "token").empty()) {
    rc.token = std::make_shared<StaticTokenSource>(Str(u, "token"));
  } else if (!Str(u, "tokenFile").empty()) {
    rc.token = std::make_shared<FileTokenSource>(Resolve(Str(u, "tokenFile"), dir), env);
  } else if (u["exec"]) {
    const YAML::Node& e = u["exec"];
    ExecConfig exec;
    exec.command = Str(e, "command");
    if (!Str(e, "apiVersion").empty()) exec.api_version = Str(e, "apiVersion");
    if (exec.command.empty()) return Status::InvalidArgument("kubeconfig: user \"" + user_name + "\": exec.command is empty");
    // A command given as a relative path with a slash is relative to the file.
    if (exec.command.find('/') != std::string::npos) exec.command = Resolve(exec.command, dir);
    if (e["args"]) {
      for (const auto& a : e["args"]) exec.args.push_back(a.as<std::string>());
    }
    if (e["env"]) {
      for (const auto& v : e["env"]) exec.env.emplace_back(Str(v, "name"), Str(v, "value"));
    }
    rc.token = std::make_shared<ExecTokenSource>(std::move(exec), env);
  } else if (u["auth-provider"]) {
    return Status::InvalidArgument("kubeconfig: user \"" + user_name +
                                   "\": auth-provider is not supported; use an exec plugin such as "
                                   "gke-gcloud-auth-plugin");
  }
  return rc;
}

Result<RestConfig> InClusterConfig(Env& env, const std::string& sa_dir) {
  auto host = env.Var("KUBERNETES_SERVICE_HOST");
  auto port = env.Var("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return Status::NotFound("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  const std::string token_path = sa_dir + "/token";
  if (!env.ReadFile(token_path).ok()) return Status::NotFound("no service account token at " + token_path);
  RestConfig rc;
  std::string h = *host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  rc.server = "https://" + h + ":" + *port;
  rc.token = std::make_shared<FileTokenSource>(token_path, env);
  rc.ca_file = sa_dir + "/ca.crt";
  if (auto ns = env.ReadFile(sa_dir + "/namespace"); ns.ok() && !TrimSpace(*ns).empty())
    rc.default_namespace = TrimSpace(*ns);
  return rc;
}

Result<RestConfig> LoadDefaultConfig(Env& env, const std::string& kubeconfig_flag,
                                     const std::string& context) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig({kubeconfig_flag}, context, env);
  if (auto list = env.Var("KUBECONFIG"); list && !list->empty()) {
    std::vector<std::string> paths;
    std::stringstream ss(*list);
    for (std::string p; std::getline(ss, p, ':');) paths.push_back(p);
    return LoadKubeconfig(paths, context, env);
  }
  if (auto host = env.Var("KUBERNETES_SERVICE_HOST"); host && !host->empty()) {
    return InClusterConfig(env);
  }
  auto home = env.Var("HOME");
  if (!home) return Status::NotFound("no kubeconfig: set KUBECONFIG or HOME");
  return LoadKubeconfig({*home + "/.kube/config"}, context, env);
}

}  // namespace tpu::kube
