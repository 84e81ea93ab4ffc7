// Markdown for a pull request, fitted to a size limit (see render_markdown.h).
#include "plan/render_markdown.h"

#include <algorithm>
#include <string>
#include <vector>

#include "plan/action_groups.h"
#include "plan/capacity_shape.h"

namespace tpu::plan {
namespace {

// Markdown and HTML both read these; a manifest error or a label value must
// stay text, never become a link, a tag or a table cell boundary.
std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '|': out += "\\|"; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '#':
        out += '\\';
        out += c;
        break;
      case '\n': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

// Inside a fenced block only a closing fence can escape.
std::string InFence(std::string s) {
  for (size_t p; (p = s.find("~~~")) != std::string::npos;) s.replace(p, 3, "~ ~ ~");
  return s;
}

std::string Signed(char sign, int n) { return std::string(1, sign) + std::to_string(n); }

struct Counts {
  int create = 0, update = 0, replace = 0, remove = 0, adopt = 0;
  int chips_created = 0, chips_destroyed = 0, hosts_created = 0, hosts_destroyed = 0;
  int changes() const { return create + update + replace + remove; }
  void Add(const Action& a) {
    switch (a.kind) {
      case ActionKind::kCreate: ++create; break;
      case ActionKind::kUpdate:
      case ActionKind::kResize: ++(a.adopt_only ? adopt : update); break;
      case ActionKind::kReplace: ++replace; break;
      case ActionKind::kDelete: ++remove; break;
      case ActionKind::kNoop: return;
    }
    chips_created += a.blast.chips_created;
    chips_destroyed += a.blast.chips_destroyed;
    hosts_created += a.blast.hosts_created;
    hosts_destroyed += a.blast.hosts_destroyed;
  }
};

Counts CountTarget(const TargetPlan& t) {
  Counts c;
  for (const auto& a : t.actions) c.Add(a);
  return c;
}

std::string StatusWord(const TargetPlan& t) {
  switch (t.status) {
    case TargetStatus::kPlanned: return CountTarget(t).changes() ? "changes" : "in sync";
    case TargetStatus::kBlocked: return "**blocked**";
    case TargetStatus::kRefused: return "**refused**";
    case TargetStatus::kSuspended: return "suspended";
  }
  return "";
}

const char* Symbol(ActionKind k) {
  switch (k) {
    case ActionKind::kCreate: return "+";
    case ActionKind::kUpdate:
    case ActionKind::kResize: return "!";  // a diff block colours `!` as a change
    case ActionKind::kReplace: return "-/+";
    case ActionKind::kDelete: return "-";
    case ActionKind::kNoop: return " ";
  }
  return "?";
}

std::string Blast(const BlastRadius& b) {
  std::string s;
  auto part = [&s](char sign, int chips, int hosts) {
    if (!chips && !hosts) return;
    s += (s.empty() ? "" : ", ") + Signed(sign, chips) + (chips == 1 ? " chip, " : " chips, ") +
         Signed(sign, hosts) + (hosts == 1 ? " host" : " hosts");
  };
  part('-', b.chips_destroyed, b.hosts_destroyed);
  part('+', b.chips_created, b.hosts_created);
  if (s.empty()) return s;
  return "  [" + s + (b.multi_host ? ", multi-host" : "") + (b.autoscaled ? ", possible capacity" : "") + "]";
}

enum class Detail { kFull, kGrouped, kOmitted };

// The body of a target's <details>: its errors and warnings, then its actions
// one by one (kFull) or one line per group of identical ones (kGrouped).
std::string SectionBody(const TargetPlan& t, Detail level) {
  std::string out;
  for (const auto& e : t.errors) out += "- :x: " + Escape(e) + "\n";
  for (const auto& w : t.warnings) out += "- :warning: " + Escape(w) + "\n";
  for (const auto& a : t.blocked_actions)
    out += "- :x: blocked: " + std::string(ActionKindName(a.kind)) + " " + ResourceKindName(a.resource.kind) +
           " `" + a.resource.name + "`: " + Escape(a.reason) + "\n";
  for (const auto& r : t.reservations)
    if (r.found)
      out += "- reservation `" + r.project + "/" + r.name + "`: " + std::to_string(r.count) + " VMs, free " +
             std::to_string(r.FreeBefore()) + " → " + std::to_string(r.FreeAfter()) + "\n";
  for (const auto& l : t.ladder)
    out += "- capacity ladder: `" + l.pool + "` on " +
           (l.rung < 0 ? std::string("none of its rungs") : "rung " + std::to_string(l.rung) + " (" + l.capacity + ")") +
           ": " + Escape(l.why) + "\n";
  if (!out.empty()) out += "\n";
  std::string lines;
  if (level == Detail::kFull) {
    for (const auto& a : t.actions) {
      if (!a.changes_something()) continue;
      lines += std::string(Symbol(a.kind)) + " " + ResourceKindName(a.resource.kind) + " \"" + a.resource.name +
               "\"" + Blast(a.blast) + (a.reason.empty() ? "" : "  (" + a.reason + ")") + "\n";
      for (const auto& c : a.changes)
        lines += "      " + c.path + ": " + c.before + " → " + c.after +
                 (c.forces_replace && a.kind == ActionKind::kReplace ? "  # forces replacement" : "") + "\n";
    }
  } else {
    for (const auto& g : GroupActions(t)) {
      std::string line = std::string(Symbol(g.kind)) + " " + std::to_string(g.actions.size()) + " " +
                         ResourceNoun(g.resource_kind, g.actions.size());
      if (!g.from_shape.empty()) line += " " + g.from_shape + " →";
      if (!g.shape.empty()) line += " " + g.shape;
      line += " (" + NameRange(g.actions) + ")" + Blast(g.blast);
      if (!g.reason.empty()) line += "  (" + g.reason + ")";
      lines += line + "\n";
      for (const auto& c : g.changes) lines += "      " + c.path + ": " + c.before + " → " + c.after + "\n";
    }
  }
  if (!lines.empty()) out += "~~~diff\n" + InFence(lines) + "~~~\n";
  else if (t.status == TargetStatus::kPlanned) out += "No changes.\n";
  if (!t.workload_pools.empty()) {
    int chips = 0;
    for (const auto& p : t.workload_pools) chips += p.chips;
    out += "\nWorkload-owned node pools (demand-driven; git never changes them): " +
           std::to_string(t.workload_pools.size()) + ", " + std::to_string(chips) + " chips.\n";
  }
  return out;
}

std::string SectionSummary(const TargetPlan& t) {
  Counts c = CountTarget(t);
  std::string s = "<code>" + Escape(t.key) + "</code>";
  if (!t.location.empty()) s += " (" + Escape(t.location) + ")";
  if (t.status == TargetStatus::kBlocked) s += " — blocked";
  if (t.status == TargetStatus::kRefused) s += " — refused";
  if (t.status == TargetStatus::kSuspended) s += " — suspended";
  if (t.vanished) s += " — directory removed";
  std::vector<std::string> parts;
  if (c.create) parts.push_back(std::to_string(c.create) + " to create");
  if (c.update) parts.push_back(std::to_string(c.update) + " to update");
  if (c.replace) parts.push_back(std::to_string(c.replace) + " to replace");
  if (c.remove) parts.push_back(std::to_string(c.remove) + " to delete");
  if (c.adopt) parts.push_back(std::to_string(c.adopt) + " to adopt");
  if (c.chips_created || c.chips_destroyed)
    parts.push_back("chips " + Signed('+', c.chips_created) + " / " + Signed('-', c.chips_destroyed));
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  return s + ": " + (joined.empty() ? "no changes" : joined);
}

std::string Section(const TargetPlan& t, Detail level) {
  if (level == Detail::kOmitted) return "";
  return "<details><summary>" + SectionSummary(t) + "</summary>\n\n" + SectionBody(t, level) + "\n</details>\n\n";
}

std::string TableRow(const TargetPlan& t) {
  Counts c = CountTarget(t);
  return "| `" + Escape(t.key) + "` | " + StatusWord(t) + " | " + std::to_string(c.create) + " | " +
         std::to_string(c.update) + " | " + std::to_string(c.replace) + " | " + std::to_string(c.remove) + " | " +
         Signed('+', c.chips_created) + " / " + Signed('-', c.chips_destroyed) + " | " +
         Signed('+', c.hosts_created) + " / " + Signed('-', c.hosts_destroyed) + " |\n";
}

// What no reviewer may miss: targets a guard refused, targets blocked by
// errors, errors outside any target. Up to a few reasons each.
std::string Guards(const Plan& plan) {
  constexpr size_t kReasonsShown = 5;
  std::string body;
  int refused = 0, blocked = 0;
  for (const auto& e : plan.errors) body += "> - " + Escape(e) + "\n";
  for (const auto& t : plan.targets) {
    if (t.status != TargetStatus::kRefused && t.status != TargetStatus::kBlocked) continue;
    (t.status == TargetStatus::kRefused ? refused : blocked) += 1;
    body += "> - `" + Escape(t.key) + "` " + (t.status == TargetStatus::kRefused ? "**refused**" : "**blocked**");
    for (size_t i = 0; i < t.errors.size() && i < kReasonsShown; ++i)
      body += (i ? "; " : ": ") + Escape(t.errors[i]);
    if (t.errors.size() > kReasonsShown) body += "; and " + std::to_string(t.errors.size() - kReasonsShown) + " more";
    body += "\n";
  }
  if (body.empty()) return "";
  std::string head;
  if (refused) head += std::to_string(refused) + (refused == 1 ? " target refused by a guard" : " targets refused by a guard");
  if (blocked) head += (head.empty() ? "" : ", ") + std::to_string(blocked) + (blocked == 1 ? " target blocked" : " targets blocked");
  if (!plan.errors.empty()) head += (head.empty() ? "" : ", ") + std::string("errors outside any target");
  return "> [!CAUTION]\n> **" + head + ": nothing is applied for " + (refused + blocked == 1 ? "it" : "them") +
         ".**\n" + body + "\n";
}

std::string Totals(const Plan& plan) {
  Summary s = plan.Summarize();
  if (!plan.HasChanges() || plan.OnlyAdoptions())
    return std::string("**No changes.** Live state matches the manifests") +
           (plan.HasErrors() ? " (for the targets that could be planned)." : ".") +
           (s.adopt ? " " + std::to_string(s.adopt) + " unmanaged " + (s.adopt == 1 ? "resource is" : "resources are") +
                          " adopted by the next apply (only their ownership labels are written)."
                    : "") +
           "\n\n";
  Counts hosts;
  for (const auto& t : plan.targets)
    if (t.executable())
      for (const auto& a : t.actions) hosts.Add(a);
  std::string out = "**Plan: " + std::to_string(s.create) + " to create, " + std::to_string(s.update) +
                    " to update, " + std::to_string(s.replace) + " to replace, " + std::to_string(s.remove) +
                    " to delete.** Chips **" + Signed('+', s.chips_created) + " / " + Signed('-', s.chips_destroyed) +
                    "**, hosts **" + Signed('+', hosts.hosts_created) + " / " + Signed('-', hosts.hosts_destroyed) + "**";
  std::string by;
  for (const auto& b : ChipsByGenerationAndCapacity(plan)) {
    if (b.key == "other") continue;
    by += (by.empty() ? "" : "; ") + b.key;
    if (b.created) by += " +" + std::to_string(b.created);
    if (b.destroyed) by += std::string(b.created ? " /" : "") + " -" + std::to_string(b.destroyed);
  }
  if (!by.empty()) out += " (" + by + ")";
  out += ".";
  if (s.chips_possible)
    out += " " + std::to_string(s.chips_possible) + " of the created chips are possible capacity (autoscaled from 0).";
  return out + "\n\n";
}

// Fits the document to the limit, shortening the largest sections first.
class Fitter {
 public:
  Fitter(const Plan& plan, const MarkdownOptions& o) : plan_(plan), o_(o) {}

  std::string Render() {
    head_ = "### TPU capacity plan\n\n" + Guards(plan_) + Totals(plan_);
    for (const auto& t : plan_.targets) rows_.push_back(TableRow(t));
    levels_.assign(plan_.targets.size(), Detail::kFull);
    for (const auto& t : plan_.targets) sections_.push_back(Section(t, Detail::kFull));
    size_t body = 0;
    for (const auto& s : sections_) body += s.size();
    rows_shown_ = rows_.size();
    size_t table = TableSize(rows_.size());
    while (head_.size() + table + body + Note().size() > o_.max_bytes) {
      size_t largest = Largest();
      if (largest == sections_.size()) break;  // every section left out already
      levels_[largest] = levels_[largest] == Detail::kFull ? Detail::kGrouped : Detail::kOmitted;
      body -= sections_[largest].size();
      sections_[largest] = Section(plan_.targets[largest], levels_[largest]);
      body += sections_[largest].size();
    }
    while (rows_shown_ > 0 && head_.size() + TableSize(rows_shown_) + body + Note().size() > o_.max_bytes)
      --rows_shown_;
    std::string out = head_ + Note() + Table(rows_shown_);
    for (const auto& s : sections_) out += s;
    if (out.size() > o_.max_bytes) out = CutAtLine(out);
    return out;
  }

 private:
  static constexpr const char* kTableHead =
      "| target | status | create | update | replace | delete | chips | hosts |\n"
      "|---|---|--:|--:|--:|--:|--:|--:|\n";

  std::string MoreRows(size_t shown) const {
    if (shown == rows_.size()) return "";
    return "\n_… and " + std::to_string(rows_.size() - shown) + " more targets, left out to fit " +
           std::to_string(o_.max_bytes) + " bytes._\n";
  }
  size_t TableSize(size_t rows) const {
    if (rows_.empty()) return 0;
    size_t n = std::string(kTableHead).size() + 1 + MoreRows(rows).size();
    for (size_t i = 0; i < rows; ++i) n += rows_[i].size();
    return n;
  }
  std::string Table(size_t rows) const {
    if (rows_.empty()) return "";
    std::string out = kTableHead;
    for (size_t i = 0; i < rows; ++i) out += rows_[i];
    return out + MoreRows(rows) + "\n";
  }

  size_t Largest() const {
    size_t best = sections_.size();
    for (size_t i = 0; i < sections_.size(); ++i)
      if (levels_[i] != Detail::kOmitted && (best == sections_.size() || sections_[i].size() > sections_[best].size()))
        best = i;
    return best;
  }

  // Says which targets were shortened and where the rest is; names a few.
  std::string Note() const {
    constexpr int kNamed = 8;
    std::string grouped, omitted;
    int n_grouped = 0, n_omitted = 0;
    for (size_t i = 0; i < levels_.size(); ++i) {
      if (levels_[i] == Detail::kFull) continue;
      bool g = levels_[i] == Detail::kGrouped;
      int& n = g ? n_grouped : n_omitted;
      std::string& list = g ? grouped : omitted;
      if (n++ < kNamed) list += std::string(list.empty() ? "" : ", ") + "`" + Escape(plan_.targets[i].key) + "`";
    }
    if (!n_grouped && !n_omitted && rows_shown_ == rows_.size()) return "";
    auto more = [](int n, const std::string& list) {
      return list + (n > kNamed ? " and " + std::to_string(n - kNamed) + " more" : "");
    };
    std::string s = "> [!NOTE]\n> Shortened to fit " + std::to_string(o_.max_bytes) + " bytes:";
    if (n_grouped) s += " identical actions grouped for " + more(n_grouped, grouped) + ";";
    if (n_omitted) s += " details left out for " + more(n_omitted, omitted) + ";";
    return s + " " + o_.full_plan_hint + ".\n\n";
  }

  // The last resort, when the totals and guards alone exceed the limit: cut
  // at a line and say so.
  std::string CutAtLine(const std::string& s) const {
    std::string tail = "\n_… cut at " + std::to_string(o_.max_bytes) + " bytes; " + o_.full_plan_hint + "._\n";
    if (tail.size() >= o_.max_bytes) return tail.substr(0, o_.max_bytes);
    size_t end = s.rfind('\n', o_.max_bytes - tail.size());
    return s.substr(0, end == std::string::npos ? 0 : end) + tail;
  }

  const Plan& plan_;
  const MarkdownOptions& o_;
  std::string head_;
  std::vector<std::string> rows_;
  std::vector<Detail> levels_;
  std::vector<std::string> sections_;
  size_t rows_shown_ = 0;
};

}  // namespace

std::string RenderMarkdown(const Plan& plan, const MarkdownOptions& options) {
  return Fitter(plan, options).Render();
}

}  // namespace tpu::plan
