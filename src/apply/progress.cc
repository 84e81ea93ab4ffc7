// Progress rendering (see progress.h).
#include "apply/progress.h"

#include <algorithm>

namespace tpu::apply {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs",
                std::chrono::duration_cast<std::chrono::milliseconds>(d).count() / 1000.0);
  return buf;
}

}  // namespace

void Progress::OnChange(const TaskResult& r) {
  if (live_) return;  // the live view shows it
  std::lock_guard<std::mutex> l(mu_);
  std::string line = std::string(StateName(r.state)) + ": " + r.description;
  if (r.state == TaskResult::State::kRunning && !r.note.empty()) line += " (" + r.note + ")";
  if (!r.status.ok()) line += ": " + r.status.message();
  if (r.state != TaskResult::State::kRunning && r.state != TaskResult::State::kPending &&
      r.started.time_since_epoch().count() != 0)
    line += " [" + Seconds(r.finished - r.started) + "]";
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::Redraw(const std::vector<TaskResult>& tasks,
                      std::chrono::steady_clock::time_point now) {
  if (!live_) return;
  std::lock_guard<std::mutex> l(mu_);
  // Move up over the previous frame and clear it.
  for (int i = 0; i < drawn_lines_; ++i) std::fprintf(out_, "\033[1A\033[2K");
  int done = 0, total = static_cast<int>(tasks.size());
  std::map<std::string, const TaskResult*> busy;  // lane (or id) → running task
  for (const auto& t : tasks) {
    if (t.state == TaskResult::State::kRunning) busy[t.lane.empty() ? t.id : t.lane] = &t;
    else if (t.state != TaskResult::State::kPending) ++done;
  }
  int lines = 0;
  const int kMaxLanes = 20;  // a terminal, not a log: the rest are counted
  for (const auto& [lane, t] : busy) {
    if (lines == kMaxLanes) {
      std::fprintf(out_, "  … and %zu more running\n", busy.size() - kMaxLanes);
      ++lines;
      break;
    }
    std::fprintf(out_, "  \033[1m%-40s\033[0m %s  %s  %s\n", lane.c_str(), t->description.c_str(),
                 t->note.c_str(), Seconds(now - t->started).c_str());
    ++lines;
  }
  std::fprintf(out_, "%d/%d done\n", done, total);
  ++lines;
  drawn_lines_ = lines;
  std::fflush(out_);
}

void Progress::Finish() {
  if (!live_) return;
  std::lock_guard<std::mutex> l(mu_);
  for (int i = 0; i < drawn_lines_; ++i) std::fprintf(out_, "\033[1A\033[2K");
  drawn_lines_ = 0;
  std::fflush(out_);
}

std::string SummaryLine(const ApplyReport& r) {
  std::string s = "Apply complete: " + std::to_string(r.applied) + " applied, " +
                  std::to_string(r.failed) + " failed, " +
                  std::to_string(r.waiting_for_capacity) + " waiting for capacity";
  if (r.skipped) s += ", " + std::to_string(r.skipped) + " skipped";
  if (r.cancelled) s += ", " + std::to_string(r.cancelled) + " cancelled";
  if (r.awaited) s += ", " + std::to_string(r.awaited) + " earlier operations awaited";
  if (r.retries) s += ", " + std::to_string(r.retries) + (r.retries == 1 ? " retry" : " retries");
  if (r.throttled) s += " (" + std::to_string(r.throttled) + " at a cluster's operations quota)";
  char buf[32];
  std::snprintf(buf, sizeof buf, " in %.1fs.", r.elapsed.count() / 1000.0);
  return s + buf;
}

}  // namespace tpu::apply
