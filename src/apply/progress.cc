// Progress rendering (see progress.h).
#include "apply/progress.h"

#include <algorithm>

namespace tpu::apply {
namespace {

constexpr const char* kGreen = "\033[32m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBold = "\033[1m";

}  // namespace

Progress::Progress(std::FILE* out, ProgressOptions options, SteadyTime start)
    : out_(out), options_(options), start_(start) {
  options_.size.columns = std::max(options_.size.columns, 10);
  options_.size.rows = std::max(options_.size.rows, 2);
}

std::string Progress::Paint(const std::string& s, const char* code) const {
  return options_.color ? std::string(code) + s + "\033[0m" : s;
}

void Progress::OnChange(const TaskResult& r) {
  if (options_.live) return;  // the frame shows it
  std::lock_guard<std::mutex> l(mu_);
  auto [it, added] = last_state_.emplace(r.id, r.state);
  bool changed = added || it->second != r.state;
  it->second = r.state;
  std::string line;
  if (changed) {
    line = std::string(StateName(r.state)) + ": " + r.description;
    if (!r.status.ok()) line += ": " + r.status.message();
    if (IsFinal(r.state) && r.started != SteadyTime{})
      line += " (" + Elapsed(r.finished - r.started) + ")";
  } else if (r.state == TaskResult::State::kRunning && r.note.find("retrying") != std::string::npos) {
    line = "retrying: " + r.description + ": " + WaitText(r);
  } else {
    return;  // a new operation to wait for is not news in a log
  }
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::Resize(TerminalSize size) {
  std::lock_guard<std::mutex> l(mu_);
  options_.size = {std::max(size.columns, 10), std::max(size.rows, 2)};
}

void Progress::EraseFrameLocked() {
  if (frame_.empty()) return;
  int rows = static_cast<int>(frame_.size());
  const int columns = options_.size.columns;
  if (options_.reflows && columns < frame_columns_) {
    rows = 0;
    for (const auto& line : frame_) rows += std::max(1, (Columns(line) + columns - 1) / columns);
  }
  std::fprintf(out_, "\r\033[%dA\033[J", rows);
  frame_.clear();
}

void Progress::PrintFinishedLocked(const std::vector<LaneView>& lanes) {
  const int width = options_.size.columns - 1;
  for (const auto& lane : lanes) {
    if (!lane.Done() || !lane.Started() || reported_.count(lane.key)) continue;
    reported_.insert(lane.key);
    bool ok = lane.AllSucceeded();
    bool waiting = !ok && std::all_of(lane.tasks.begin(), lane.tasks.end(), [](const TaskResult* t) {
      return t->state == TaskResult::State::kDone || t->state == TaskResult::State::kWaitingForCapacity;
    });
    const char* mark = ok ? "✓" : waiting ? "…" : "✗";
    std::string text = FitColumns(FinishedLaneText(lane), width - 2);
    std::fprintf(out_, "%s %s\n", Paint(mark, ok ? kGreen : waiting ? kYellow : kRed).c_str(), text.c_str());
  }
}

std::vector<std::string> Progress::FrameLocked(const std::vector<LaneView>& lanes,
                                               const std::vector<TaskResult>& tasks,
                                               SteadyTime now) const {
  // One column is left free: a line that fills the last column leaves some
  // terminals waiting to wrap, and the next newline would then skip a row.
  const int width = options_.size.columns - 1;
  std::vector<const LaneView*> busy;
  for (const auto& lane : lanes)
    if (lane.Started() && !lane.Done()) busy.push_back(&lane);
  int name_width = 0;
  for (const LaneView* l : busy) name_width = std::max(name_width, Columns(l->name));
  // A name is cut only past half the width: it is what a person looks for.
  name_width = std::min(name_width, std::max(8, width / 2));
  // The frame, the total line and the cursor's row fit on the screen.
  size_t room = static_cast<size_t>(std::max(0, options_.size.rows - 2));
  std::vector<std::string> frame;
  for (size_t i = 0; i < busy.size() && frame.size() < room; ++i) {
    if (busy.size() > room && frame.size() + 1 == room) {
      frame.push_back(FitColumns("  … and " + std::to_string(busy.size() - i) + " more lanes in flight", width));
      break;
    }
    frame.push_back("  " + LaneLine(*busy[i], now, name_width, width - 2));
  }
  frame.push_back(FitColumns(TotalLine(tasks, start_, now), width));
  return frame;
}

void Progress::DrawFrameLocked(const std::vector<std::string>& frame) {
  for (size_t i = 0; i < frame.size(); ++i) {
    bool total = i + 1 == frame.size();
    std::fprintf(out_, "%s\n", total ? Paint(frame[i], kBold).c_str() : frame[i].c_str());
  }
  frame_ = frame;
  frame_columns_ = options_.size.columns;
  std::fflush(out_);
}

void Progress::Redraw(const std::vector<TaskResult>& tasks, SteadyTime now) {
  if (!options_.live) return;
  std::lock_guard<std::mutex> l(mu_);
  std::vector<LaneView> lanes = GroupLanes(tasks);
  EraseFrameLocked();
  PrintFinishedLocked(lanes);
  DrawFrameLocked(FrameLocked(lanes, tasks, now));
}

void Progress::PrintAbove(const std::string& line) {
  std::lock_guard<std::mutex> l(mu_);
  if (!options_.live) {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    return;
  }
  std::vector<std::string> frame = frame_;
  EraseFrameLocked();
  // Cut like every other line: a wrapped line would shift the frame's rows.
  std::fprintf(out_, "%s\n", FitColumns(line, options_.size.columns - 1).c_str());
  if (!frame.empty()) DrawFrameLocked(frame);
  std::fflush(out_);
}

void Progress::Finish(const std::vector<TaskResult>& tasks, SteadyTime now) {
  if (!options_.live) return;
  std::lock_guard<std::mutex> l(mu_);
  EraseFrameLocked();
  PrintFinishedLocked(GroupLanes(tasks));
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
