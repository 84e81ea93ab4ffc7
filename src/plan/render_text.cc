// Terraform-style text for a plan.
#include "plan/render_text.h"

#include <string>

#include "plan/action_groups.h"
#include "plan/capacity_shape.h"

namespace tpu::plan {
namespace {

class Writer {
 public:
  explicit Writer(const TextOptions& o) : o_(o) {}

  std::string Render(const Plan& plan) {
    int actions = 0;
    for (const auto& t : plan.targets)
      for (const auto& a : t.actions) actions += a.changes_something() ? 1 : 0;
    summary_ = !o_.full && actions > o_.summary_over;
    for (const auto& e : plan.errors) Line(Paint("Error: ", kRed) + e);
    if (!plan.errors.empty()) out_ += "\n";
    for (const auto& t : plan.targets) Target(t);
    Summary s = plan.Summarize();
    if (!plan.HasChanges() || plan.OnlyAdoptions()) {
      out_ += Paint("No changes.", kBold) + " Live state matches the manifests";
      out_ += plan.HasErrors() ? " (for the targets that could be planned)." : ".";
      if (s.adopt)
        out_ += " " + std::to_string(s.adopt) + " unmanaged " + (s.adopt == 1 ? "resource is" : "resources are") +
                " adopted by the next apply (only their ownership labels are written).";
      out_ += "\n";
    } else {
      if (summary_)
        Line("(" + std::to_string(actions) + " actions, grouped: more than --summary-over " +
             std::to_string(o_.summary_over) + "; --full or -o json lists every one)");
      out_ += Paint("Plan:", kBold) + " " + std::to_string(s.create) + " to create, " +
              std::to_string(s.update) + " to update, " + std::to_string(s.replace) + " to replace, " +
              std::to_string(s.remove) + " to delete" +
              (s.adopt ? ", " + std::to_string(s.adopt) + " to adopt." : ".");
      if (s.chips_created || s.chips_destroyed) {
        out_ += " Chips: +" + std::to_string(s.chips_created) + " / -" + std::to_string(s.chips_destroyed) +
                ByShape(plan);
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

  // " (v6e spot +640; v5p onDemand +64 / -16)"; "" when no shape is known.
  static std::string ByShape(const Plan& plan) {
    std::vector<ShapeChips> by = ChipsByGenerationAndCapacity(plan);
    if (by.empty() || (by.size() == 1 && by[0].key == "other")) return "";
    std::string s;
    for (const auto& b : by) {
      s += (s.empty() ? " (" : "; ") + b.key;
      if (b.created) s += " +" + std::to_string(b.created);
      if (b.destroyed) s += std::string(b.created ? " /" : "") + " -" + std::to_string(b.destroyed);
    }
    return s + ")";
  }

  static const char* Symbol(ActionKind k) {
    switch (k) {
      case ActionKind::kCreate: return "+";
      case ActionKind::kUpdate:
      case ActionKind::kResize: return "~";
      case ActionKind::kReplace: return "-/+";
      case ActionKind::kDelete: return "-";
      case ActionKind::kNoop: return " ";
    }
    return "?";
  }
  const char* Color(ActionKind k) const {
    if (k == ActionKind::kCreate) return kGreen;
    if (k == ActionKind::kReplace || k == ActionKind::kDelete) return kRed;
    return kYellow;
  }

  // "+ 40 node pools v6e 4x4 spot (v6e-spot-0 … -39), +640 chips", then the
  // changes the group shares.
  void Group(const ActionGroup& g) {
    std::string line = "  " + Paint(Symbol(g.kind), Color(g.kind)) + " " + std::to_string(g.actions.size()) +
                       " " + ResourceNoun(g.resource_kind, g.actions.size());
    if (!g.from_shape.empty()) line += " " + g.from_shape + " →";
    if (!g.shape.empty()) line += " " + g.shape;
    line += " (" + NameRange(g.actions) + ")";
    if (g.kind == ActionKind::kUpdate) line += g.actions.front()->adopt_only ? " adopted" : " updated in place";
    if (g.kind == ActionKind::kResize) line += " resized";
    const BlastRadius& b = g.blast;
    auto chips = [](int n) { return std::to_string(n) + (n == 1 ? " chip" : " chips"); };
    if (b.chips_destroyed) line += ", -" + chips(b.chips_destroyed);
    if (b.chips_created) line += std::string(b.chips_destroyed ? " /" : ",") + " +" + chips(b.chips_created);
    if (!g.reason.empty()) line += " (" + g.reason + ")";
    Line(line);
    for (const auto& c : g.changes) {
      std::string change = "      " + c.path + ": " + c.before + " → " + c.after;
      if (c.forces_replace && g.kind == ActionKind::kReplace) change += Paint("  # forces replacement", kRed);
      Line(change);
    }
  }

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
    if (summary_) {
      for (const auto& g : GroupActions(t)) {
        Group(g);
        ++shown;
      }
    } else {
      for (const auto& a : t.actions) {
        if (a.kind == ActionKind::kNoop && !o_.show_noop) continue;
        Action_(a);
        ++shown;
      }
    }
    if (shown == 0 && t.status == TargetStatus::kPlanned) Line("  (no changes)");
    Reservations(t);
    WorkloadPools(t.workload_pools);
    if (t.status == TargetStatus::kRefused)
      Line("  " + Paint("Nothing above will be applied for this target.", kRed));
    out_ += "\n";
  }

  // Each reservation's headroom before → after, and what it has no room for.
  void Reservations(const TargetPlan& t) {
    for (const auto& r : t.reservations) {
      std::string line = "  Reservation " + r.project + "/" + r.name + (r.zone.empty() ? "" : " (" + r.zone + ")") + ": ";
      if (!r.found) line += "not found in the refresh; headroom unknown";
      else
        line += std::to_string(r.count) + " VMs reserved, " + std::to_string(r.in_use) + " in use; free " +
                std::to_string(r.FreeBefore()) + " → " + std::to_string(r.FreeAfter());
      Line(line);
    }
    for (const auto& a : t.blocked_actions)
      Line("  " + Paint("Blocked: ", kRed) + ActionKindName(a.kind) + " " + ResourceKindName(a.resource.kind) + " \"" +
           a.resource.name + "\": " + a.reason);
    for (const auto& l : t.ladder)
      Line("  Capacity ladder: " + l.pool + " " +
           (l.rung < 0 ? std::string("on none of its ") + std::to_string(l.rungs) + " rungs"
                       : "on rung " + std::to_string(l.rung) + " of " + std::to_string(l.rungs) + " (" + l.capacity +
                             ")") +
           ": " + l.why);
  }

  // Demand-driven pools: shown as a group of their own, never as actions.
  void WorkloadPools(const std::vector<WorkloadOwnedPool>& pools) {
    if (pools.empty()) return;
    int chips = 0;
    for (const auto& p : pools) chips += p.chips;
    Line("  " + Paint("Workload-owned node pools", kBold) + " (demand-driven; git never changes them): " +
         std::to_string(pools.size()) + (pools.size() == 1 ? " pool, " : " pools, ") + std::to_string(chips) +
         (chips == 1 ? " chip" : " chips"));
    if (summary_) return;
    for (const auto& p : pools)
      Line("    " + p.name + "  JobSet " + p.jobset + ", " + p.status + ", " + std::to_string(p.chips) +
           (p.chips == 1 ? " chip" : " chips"));
  }

  void Action_(const Action& a) {
    std::string sym, verb;
    const char* color = kYellow;
    switch (a.kind) {
      case ActionKind::kCreate: sym = "+"; verb = "will be created"; color = kGreen; break;
      case ActionKind::kUpdate:
        sym = "~";
        verb = a.adopt_only ? "will be adopted" : "will be updated in place";
        break;
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
  bool summary_ = false;
  std::string out_;
};

}  // namespace

std::string RenderText(const Plan& plan, const TextOptions& options) {
  return Writer(options).Render(plan);
}

}  // namespace tpu::plan
