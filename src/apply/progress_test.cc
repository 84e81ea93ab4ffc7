// The progress display: lane lines asserted exactly, and frames drawn through
// a VT100 emulator (libvterm) to check what a person would see — one row per
// lane in flight, nothing wrapped, nothing left behind by a redraw.
#include "apply/progress.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "vt_screen.h"

namespace tpu::apply {
namespace {

using State = TaskResult::State;
using std::chrono::milliseconds;
using std::chrono::seconds;

const SteadyTime kT0 = SteadyTime{} + std::chrono::hours(1);

TaskResult Task(const std::string& cluster, const std::string& pool, State state, std::string note = "",
                SteadyTime started = kT0, SteadyTime finished = {}) {
  TaskResult t;
  t.id = "nodePool:proj/us-east5/" + cluster + "/" + pool;
  t.group = "gke:proj/us-east5/" + cluster;  // as the executor sets them: a group per
  t.lane = t.group + "/" + pool;               // cluster, a lane per node pool
  t.description = "create " + t.id;
  t.state = state;
  t.note = std::move(note);
  if (state != State::kPending) t.started = started;
  if (state != State::kPending && state != State::kRunning) t.finished = finished;
  return t;
}

std::string Waiting(const std::string& cluster, const std::string& pool, const std::string& op) {
  return "create node pool proj/us-east5/" + cluster + "/" + pool + ": waiting for " + op;
}

ProgressOptions Live(int columns, int rows, bool reflows = false) {
  ProgressOptions o;
  o.live = true;
  o.color = true;
  o.reflows = reflows;
  o.size = {columns, rows};
  return o;
}

// Progress writing into a string.
class Capture {
 public:
  Capture() : file_(open_memstream(&buf_, &size_)) {}
  ~Capture() {
    std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  // Everything written since the last call.
  std::string Take() {
    std::fflush(file_);
    std::string out(buf_ + taken_, size_ - taken_);
    taken_ = size_;
    return out;
  }
  // The same, as a terminal receives it: a tty's output processing (ONLCR)
  // turns each "\n" into "\r\n".
  std::string TakeAsTty() {
    std::string out;
    for (char c : Take()) {
      if (c == '\n') out += '\r';
      out += c;
    }
    return out;
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  size_t taken_ = 0;
  std::FILE* file_;
};

TEST(ProgressLanesTest, OneLineNamesTheClusterActionsWaitElapsedAndCount) {
  std::vector<TaskResult> tasks;
  for (int i = 0; i < 4; ++i)
    tasks.push_back(Task("c1", "v6e-" + std::to_string(i), State::kDone, "", kT0, kT0 + seconds(5)));
  for (int i = 4; i < 9; ++i)
    tasks.push_back(Task("c1", "v6e-" + std::to_string(i), State::kRunning,
                         Waiting("c1", "v6e-" + std::to_string(i), "operation-" + std::to_string(i)),
                         kT0 + seconds(i)));
  for (int i = 9; i < 16; ++i) tasks.push_back(Task("c1", "v6e-" + std::to_string(i), State::kPending));
  auto lanes = GroupLanes(tasks);
  ASSERT_EQ(lanes.size(), 1u);
  std::string wide = LaneLine(lanes[0], kT0 + seconds(62), 2, 100);
  EXPECT_EQ(wide, "c1  create v6e-4, v6e-5 +3  waiting for 5 operations" + std::string(37, ' ') +
                      "1m02s  4/16");
  EXPECT_EQ(Columns(wide), 100);
  // Cut to the width: the wait goes first, the name, elapsed time and count stay.
  EXPECT_EQ(LaneLine(lanes[0], kT0 + seconds(62), 2, 50), "c1  create v6e-4, v6e-5 +3  waiting …  1m02s  4/16");
  EXPECT_EQ(Columns(LaneLine(lanes[0], kT0 + seconds(62), 2, 50)), 50);
}

TEST(ProgressLanesTest, OneActionShowsWhatItWaitsForOnce) {
  std::vector<TaskResult> tasks = {Task("c1", "v5p-0", State::kRunning, Waiting("c1", "v5p-0", "operation-7"))};
  auto lanes = GroupLanes(tasks);
  EXPECT_EQ(LaneLine(lanes[0], kT0 + milliseconds(4200), 2, 60),
            "c1  create v5p-0  waiting for operation-7          4.2s  0/1");
  // The delete half of a replace says so.
  tasks[0].description = "replace " + tasks[0].id;
  tasks[0].note = "delete node pool proj/us-east5/c1/v5p-0: waiting for operation-8";
  EXPECT_EQ(WaitText(tasks[0]), "delete: waiting for operation-8");
}

TEST(ProgressLanesTest, LanesSharingAClusterNameKeepTheirProject) {
  TaskResult a = Task("train", "x-0", State::kRunning);
  TaskResult b = a;
  b.group = "gke:other/us-east5/train";
  b.lane = b.group + "/x-0";
  b.id = "nodePool:other/us-east5/train/x-0";
  TaskResult c = Task("serve", "y-0", State::kRunning);
  auto lanes = GroupLanes({a, b, c});
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].name, "proj/train");
  EXPECT_EQ(lanes[1].name, "other/train");
  EXPECT_EQ(lanes[2].name, "serve");
}

TEST(ProgressLanesTest, FinishedLaneLines) {
  std::vector<TaskResult> one = {Task("c1", "v5p-multislice-0", State::kDone, "", kT0, kT0 + seconds(252))};
  EXPECT_EQ(FinishedLaneText(GroupLanes(one)[0]), "c1  create v5p-multislice-0  4m12s");
  std::vector<TaskResult> many = {Task("c1", "a-0", State::kDone, "", kT0, kT0 + seconds(1)),
                                  Task("c1", "a-1", State::kFailed, "", kT0, kT0 + seconds(2)),
                                  Task("c1", "a-2", State::kDone, "", kT0, kT0 + seconds(3))};
  EXPECT_EQ(FinishedLaneText(GroupLanes(many)[0]), "c1  2 created, 1 failed  3.0s");
  std::vector<TaskResult> never = {Task("c2", "b-0", State::kSkipped), Task("c2", "b-1", State::kSkipped)};
  for (auto& t : never) t.started = {};  // skipped before they ever ran
  EXPECT_EQ(FinishedLaneText(GroupLanes(never)[0]), "c2  2 skipped");
}

TEST(ProgressLanesTest, FitColumnsCountsCharactersNotBytes) {
  EXPECT_EQ(FitColumns("✓ abcdef", 5), "✓ ab…");
  EXPECT_EQ(Columns("✓ ab…"), 5);
  EXPECT_EQ(FitColumns("short", 10), "short");
}

// Rows of the screen that show lane `name` (in flight or finished).
int RowsNaming(const std::vector<std::string>& rows, const std::string& name) {
  int n = 0;
  for (const auto& r : rows)
    if (r.rfind("  " + name + " ", 0) == 0 || r.rfind("✓ " + name + " ", 0) == 0) ++n;
  return n;
}

// Twelve lanes of long names, redrawn as their tasks move on, on an 80x24
// VT100: every frame has one row per lane in flight, no row reaches the last
// column, and each lane ends as one ✓ row.
TEST(ProgressTest, RedrawsInPlaceOnAVt100) {
  test_support::VtScreen screen(24, 80);
  Capture out;
  Progress progress(out.file(), Live(80, 24), kT0);
  const int kLanes = 12;
  auto cluster = [](int c) { return "research-training-cluster-" + std::to_string(c); };
  std::vector<TaskResult> tasks;
  for (int c = 0; c < kLanes; ++c)
    for (int p = 0; p < 3; ++p)
      tasks.push_back(Task(cluster(c), "v6e-spot-4x4-slice-pool-" + std::to_string(p), State::kPending));
  // Step s: task p of lane c runs during steps [c+p*3, c+p*3+3).
  for (int step = 0; step < kLanes + 12; ++step) {
    SteadyTime now = kT0 + seconds(step);
    for (int c = 0; c < kLanes; ++c)
      for (int p = 0; p < 3; ++p) {
        TaskResult& t = tasks[c * 3 + p];
        int begin = c + p * 3;
        if (step >= begin + 3) {
          t.state = State::kDone;
          t.finished = kT0 + seconds(begin + 3);
        } else if (step >= begin) {
          t.state = State::kRunning;
          t.started = kT0 + seconds(begin);
          t.note = Waiting(cluster(c), "v6e-spot-4x4-slice-pool-" + std::to_string(p),
                           "operation-1795471628669-56" + std::to_string(c));
        }
      }
    progress.Redraw(tasks, now);
    screen.Write(out.TakeAsTty());
    auto rows = screen.AllRows();
    for (int c = 0; c < kLanes; ++c) EXPECT_LE(RowsNaming(rows, cluster(c)), 1) << "step " << step << " lane " << c;
    for (int r = 0; r < 24; ++r) EXPECT_FALSE(screen.LastColumnUsed(r)) << "row " << r;
    int totals = 0;
    for (const auto& r : rows) totals += r.rfind("Applying:", 0) == 0 ? 1 : 0;
    EXPECT_EQ(totals, 1);
  }
  progress.Finish(tasks, kT0 + seconds(40));
  screen.Write(out.TakeAsTty());
  auto rows = screen.AllRows();
  for (int c = 0; c < kLanes; ++c) {
    int done = 0;
    for (const auto& r : rows) done += r.rfind("✓ " + cluster(c) + "  3 created", 0) == 0 ? 1 : 0;
    EXPECT_EQ(done, 1) << cluster(c);
    EXPECT_EQ(RowsNaming(rows, cluster(c)), 1);
  }
  for (const auto& r : rows) EXPECT_EQ(r.rfind("Applying:", 0), std::string::npos) << "the frame is gone";
}

TEST(ProgressTest, TheFrameIsNoTallerThanTheScreen) {
  test_support::VtScreen screen(10, 80);
  Capture out;
  Progress progress(out.file(), Live(80, 10), kT0);
  std::vector<TaskResult> tasks;
  for (int c = 0; c < 30; ++c) tasks.push_back(Task("c" + std::to_string(c), "p-0", State::kRunning, "", kT0));
  for (int i = 0; i < 3; ++i) {
    progress.Redraw(tasks, kT0 + seconds(i));
    screen.Write(out.TakeAsTty());
  }
  auto rows = screen.Rows();
  EXPECT_EQ(rows[7], "  … and 23 more lanes in flight");
  EXPECT_EQ(rows[8].rfind("Applying: 0/30 done, 30 in flight", 0), 0u) << rows[8];
  EXPECT_EQ(screen.AllRows().size(), 10u) << "nothing scrolled: no copies above";
}

TEST(ProgressTest, LogLinesGoAboveTheFrame) {
  test_support::VtScreen screen(24, 80);
  Capture out;
  Progress progress(out.file(), Live(80, 24), kT0);
  std::vector<TaskResult> tasks = {Task("c1", "a-0", State::kRunning, "", kT0)};
  progress.Redraw(tasks, kT0);
  progress.PrintAbove("warning: interrupted");
  progress.Redraw(tasks, kT0 + seconds(1));
  screen.Write(out.TakeAsTty());
  auto rows = screen.Rows();
  EXPECT_EQ(rows[0], "warning: interrupted");
  EXPECT_EQ(rows[1].rfind("  c1  create a-0", 0), 0u) << rows[1];
  EXPECT_EQ(rows[2].rfind("Applying:", 0), 0u);
  EXPECT_EQ(rows[3], "");
}

// A terminal that rewraps lines when it narrows (tmux): the last frame now
// fills the rows its lines rewrap into, and the redraw climbs over all of them.
TEST(ProgressTest, AfterNarrowingAReflowingTerminalTheWholeOldFrameIsCleared) {
  Capture out;
  Progress progress(out.file(), Live(200, 40, true), kT0);
  std::vector<TaskResult> tasks = {Task(std::string(60, 'c'), "a-0", State::kRunning, Waiting("c", "a-0", std::string(100, 'o')), kT0)};
  progress.Redraw(tasks, kT0);
  std::string first = out.Take();
  progress.Resize({80, 40});
  progress.Redraw(tasks, kT0 + seconds(1));
  // The lane line was 199 columns: 3 rows at 80; the total line 1.
  EXPECT_EQ(out.Take().rfind("\r\033[4A\033[J", 0), 0u);
  // Without reflow the same frame is its 2 rows.
  Capture plain;
  Progress xterm(plain.file(), Live(200, 40), kT0);
  xterm.Redraw(tasks, kT0);
  plain.Take();
  xterm.Resize({80, 40});
  xterm.Redraw(tasks, kT0 + seconds(1));
  EXPECT_EQ(plain.Take().rfind("\r\033[2A\033[J", 0), 0u);
}

TEST(ProgressTest, WithoutATerminalOneLinePerStateChange) {
  Capture out;
  Progress progress(out.file(), ProgressOptions{}, kT0);
  TaskResult t = Task("c1", "a-0", State::kRunning, Waiting("c1", "a-0", "operation-1"));
  progress.OnChange(t);
  t.note = Waiting("c1", "a-0", "operation-2");
  progress.OnChange(t);  // a new operation: not a state change
  t.note = "create node pool proj/us-east5/c1/a-0: retrying (429 Too many operations)";
  progress.OnChange(t);
  t.state = State::kDone;
  t.finished = kT0 + milliseconds(1500);
  progress.OnChange(t);
  EXPECT_EQ(out.Take(),
            "running: create nodePool:proj/us-east5/c1/a-0\n"
            "retrying: create nodePool:proj/us-east5/c1/a-0: retrying (429 Too many operations)\n"
            "done: create nodePool:proj/us-east5/c1/a-0 (1.5s)\n");
}

}  // namespace
}  // namespace tpu::apply
