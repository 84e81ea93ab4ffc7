// `tpu-provisioner validate --repo PATH [-o text|json]`: loads every manifest
// under PATH/deploy/ and lists every error. Exit 0 when clean, 1 otherwise.
// Text: one "file:line:col: field: message" per line, and on a terminal the
// source line with a caret under the column. JSON: an array of
// {file, line, column, field, message}, [] when clean.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "manifest/disk_tree.h"
#include "manifest/loader.h"

namespace tpu::cli {
namespace {

struct ValidateFlags {
  std::string repo;
  std::string output = "text";
};

// Line `line` (1-based) of `text`, without its newline.
std::string LineOf(const std::string& text, int line) {
  size_t start = 0;
  for (int i = 1; i < line && start != std::string::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos || start > text.size()) return "";
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

void PrintText(const manifest::Tree& tree, const std::vector<manifest::Error>& errors) {
  const bool person = isatty(STDOUT_FILENO);
  std::map<std::string, std::string> files;  // read once, only on a terminal
  for (const auto& e : errors) {
    std::printf("%s\n", e.ToString().c_str());
    if (!person || e.where.line <= 0) continue;
    auto it = files.find(e.where.file);
    if (it == files.end()) {
      auto bytes = tree.Read(e.where.file);
      it = files.emplace(e.where.file, bytes.ok() ? *bytes : std::string()).first;
    }
    std::string source = LineOf(it->second, e.where.line);
    if (source.empty()) continue;
    std::string caret;
    for (int i = 1; i < e.where.column && i <= static_cast<int>(source.size()); ++i)
      caret += source[i - 1] == '\t' ? '\t' : ' ';
    std::printf("    %s\n    %s^\n", source.c_str(), caret.c_str());
  }
}

void PrintJson(const std::vector<manifest::Error>& errors) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : errors)
    out.push_back({{"file", e.where.file},
                   {"line", e.where.line},
                   {"column", e.where.column},
                   {"field", e.field},
                   {"message", e.message}});
  std::printf("%s\n", out.dump(2).c_str());
}

int RunValidate(const ValidateFlags& flags) {
  auto tree = manifest::DiskTree::Open(flags.repo);
  if (!tree.ok()) {
    std::fprintf(stderr, "error: --repo %s\n", tree.status().message().c_str());
    return 1;
  }
  manifest::Repo repo = manifest::LoadRepo(**tree);
  std::vector<manifest::Error> errors = repo.AllErrors();
  if (flags.output == "json") PrintJson(errors);
  else PrintText(**tree, errors);
  if (!errors.empty()) {
    std::fprintf(stderr, "%zu error%s\n", errors.size(), errors.size() == 1 ? "" : "s");
    return 1;
  }
  if (flags.output != "json") {
    size_t pools = 0, node_pools = 0, groups = 0;
    for (const auto& t : repo.targets) {
      pools += t.pools.size();
      groups += t.groups.size();
      for (const auto& p : t.pools) node_pools += static_cast<size_t>(p.slices);
    }
    std::printf("%s: valid: %zu targets, %zu TPUNodePools (%zu node pools), %zu TPUNodeGroups\n",
                flags.repo.c_str(), repo.targets.size(), pools, node_pools, groups);
  }
  return 0;
}

}  // namespace

void AddValidateCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("validate", "Check every manifest under deploy/ and list all errors");
  cmd->footer("Examples:\n"
              "  tpu-provisioner validate --repo example-project\n"
              "  tpu-provisioner validate --repo . -o json      # for CI annotations: [{file, line, column, field, message}]");
  auto flags = std::make_shared<ValidateFlags>();
  cmd->add_option("--repo", flags->repo, "The repository (a directory holding deploy/<project>/<cluster>/)")
      ->required();
  cmd->add_option("-o,--output", flags->output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([flags, &ctx] { ctx.exit_code = RunValidate(*flags); });
}

}  // namespace tpu::cli
