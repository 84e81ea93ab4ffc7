// Terraform-style text for a plan.
#include "plan/render_text.h"

#include <string>

namespace tpu::plan {
namespace {

class Writer {
 public:
  explicit Writer(const TextOptions& o) : o_(o) {}

  std::string Render(const Plan& plan) {
    for (const auto& e : plan.errors) Line(Paint("Error: ", kRed) + e);
    if (!plan.errors.empty()) out_ += "\n";
    for (const auto& t : plan.targets) Target(t);
    Summary s = plan.Summarize();
    if (!plan.HasChanges()) {
      out_ += Paint("No changes.", kBold) + " Live state matches the manifests";
      out_ += plan.HasErrors() ? " (for the targets that could be planned).\n" : ".\n";
    } else {
      out_ += Paint("Plan:", kBold) + " " + std::to_string(s.create) + " to create, " +
              std::to_string(s.update) + " to update, " + std::to_string(s.replace) + " to replace, " +
              std::to_string(s.remove) + " to delete.";
      if (s.chips_created || s.chips_destroyed) {
        out_ += " Chips: +" + std::to_string(s.chips_created) + " / -" + std::to_string(s.chips_destroyed);
        if (s.chips_possible)
          out_ += " (" + std::to_string(s.chips_possible) + " of the + possible: autoscaled, there once workloads ask)";
        out_ += ".";
      }
      out_ += "\n";
    }
    return std::move(out_);
  }

 private:
  static constexpr const char* kRed = "\033[31m";
  static constexpr const char* kGreen = "\033[32m";
  static constexpr const char* kYellow = "\033[33m";
  static constexpr const char* kBold = "\033[1m";

  std::string Paint(const std::string& s, const char* code) const {
    return o_.color ? std::string(code) + s + "\033[0m" : s;
  }
  void Line(const std::string& s) { out_ += s + "\n"; }

  void Target(const TargetPlan& t) {
    std::string head = "Target " + t.key;
    if (!t.location.empty()) head += " (" + t.location + ")";
    if (t.vanished) head += " — directory removed";
    switch (t.status) {
      case TargetStatus::kPlanned: break;
      case TargetStatus::kBlocked: head += ": " + Paint("blocked", kRed); break;
      case TargetStatus::kRefused: head += ": " + Paint("refused", kRed); break;
      case TargetStatus::kSuspended: head += ": suspended"; break;
    }
    Line(Paint(head, kBold));
    for (const auto& e : t.errors) Line("  " + Paint("Error: ", kRed) + e);
    for (const auto& w : t.warnings) Line("  " + Paint("Warning: ", kYellow) + w);
    int shown = 0;
    for (const auto& a : t.actions) {
      if (a.kind == ActionKind::kNoop && !o_.show_noop) continue;
      Action_(a);
      ++shown;
    }
    if (shown == 0 && t.status == TargetStatus::kPlanned) Line("  (no changes)");
    WorkloadPools(t.workload_pools);
    if (t.status == TargetStatus::kRefused)
      Line("  " + Paint("Nothing above will be applied for this target.", kRed));
    out_ += "\n";
  }

  // Demand-driven pools: shown as a group of their own, never as actions.
  void WorkloadPools(const std::vector<WorkloadOwnedPool>& pools) {
    if (pools.empty()) return;
    int chips = 0;
    for (const auto& p : pools) chips += p.chips;
    Line("  " + Paint("Workload-owned node pools", kBold) + " (demand-driven; git never changes them): " +
         std::to_string(pools.size()) + (pools.size() == 1 ? " pool, " : " pools, ") + std::to_string(chips) +
         (chips == 1 ? " chip" : " chips"));
    for (const auto& p : pools)
      Line("    " + p.name + "  JobSet " + p.jobset + ", " + p.status + ", " + std::to_string(p.chips) +
           (p.chips == 1 ? " chip" : " chips"));
  }

  void Action_(const Action& a) {
    std::string sym, verb;
    const char* color = kYellow;
    switch (a.kind) {
      case ActionKind::kCreate: sym = "+"; verb = "will be created"; color = kGreen; break;
      case ActionKind::kUpdate: sym = "~"; verb = "will be updated in place"; break;
      case ActionKind::kResize: sym = "~"; verb = "will be resized in place"; break;
      case ActionKind::kReplace: sym = "-/+"; verb = "must be replaced"; color = kRed; break;
      case ActionKind::kDelete: sym = "-"; verb = "will be deleted"; color = kRed; break;
      case ActionKind::kNoop: sym = " "; verb = "is in sync"; color = kBold; break;
    }
    std::string what = std::string(ResourceKindName(a.resource.kind)) + " \"" + a.resource.name + "\"";
    Line("  " + Paint("# " + what + " " + verb, kBold) + (a.reason.empty() ? "" : " (" + a.reason + ")"));
    std::string line = "  " + Paint(sym, color) + " " + what;
    std::string blast = Blast(a.blast);
    if (!blast.empty()) line += "  " + blast;
    Line(line);
    for (const auto& c : a.changes) {
      std::string change = "      " + c.path + ": " + c.before + " → " + c.after;
      if (c.forces_replace && a.kind == ActionKind::kReplace) change += Paint("  # forces replacement", kRed);
      Line(change);
    }
    if (!a.depends_on.empty()) {
      std::string deps;
      for (const auto& d : a.depends_on) deps += (deps.empty() ? "" : ", ") + d;
      Line("      (after " + deps + ")");
    }
  }

  static std::string Blast(const BlastRadius& b) {
    std::string s;
    auto part = [&s](const char* sign, int chips, int hosts) {
      if (!chips && !hosts) return;
      if (!s.empty()) s += ", ";
      s += std::string(sign) + std::to_string(chips) + (chips == 1 ? " chip, " : " chips, ") + sign +
           std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
    };
    part("-", b.chips_destroyed, b.hosts_destroyed);
    part("+", b.chips_created, b.hosts_created);
    if (s.empty()) return s;
    return "[" + s + (b.multi_host ? ", multi-host" : "") +
           (b.autoscaled ? ", autoscaled from 0: possible capacity" : "") + "]";
  }

  const TextOptions& o_;
  std::string out_;
};

}  // namespace

std::string RenderText(const Plan& plan, const TextOptions& options) {
  return Writer(options).Render(plan);
}

}  // namespace tpu::plan
