// `apply` as a person at a terminal sees it: the real binary on a
// pseudo-terminal (forkpty, with a window size), its output rendered by a
// VT100 emulator (libvterm), against the cloud emulator over loopback.
//
// - The approval: "no" makes zero mutating calls, "yes" applies; without a
//   terminal (and without --auto-approve) apply exits 1 and changes nothing.
// - The progress display at 80 and 200 columns, and through a resize
//   (SIGWINCH) in the middle of the apply: at every moment, each cluster lane
//   holds at most one row (no copy of an old frame is left behind) and no lane
//   row reaches the last column (nothing wrapped); at the end each lane is one
//   "✓" row and the frame is gone.
#include <cctype>
#include <chrono>
#include <functional>
#include <set>

#include "apply/apply_e2e_fixture.h"
#include "apply/progress_lanes.h"
#include "pty_process.h"
#include "vt_screen.h"

namespace tpu::cli {
namespace {

using std::chrono::milliseconds;
using test_support::PtyProcess;
using test_support::VtScreen;

constexpr int kClusters = 4;
constexpr int kRows = 40;
// Each cluster's 3 pools in two rounds: a lane line shows two actions in
// flight, then one, and the apply lasts long enough for several frames.
constexpr const char* kTwoAtATime = " --cluster-operations 2";

std::string ClusterName(int c) { return "research-training-cluster-us-east5-" + std::to_string(c); }

class ApplyTerminalTest : public apply::testing::ApplyE2EBase {
 protected:
  void SetUp() override {
    ApplyE2EBase::SetUp();
    // Operations long enough for several frames per action.
    StartEmulator(400);
    for (int c = 0; c < kClusters; ++c) {
      AddCluster(ClusterName(c));
      Write("deploy/proj-apply/" + ClusterName(c) + "/pools.yaml",
            apply::testing::Pool("v6e-spot-4x4-slice-pool", "4x4", 3));
    }
  }

  // Runs `apply args` on a terminal, feeding its output to `screen`; after
  // each piece of output, `seen(output)` runs. Returns the exit code.
  int RunOnTerminal(const std::string& args, VtScreen& screen,
                    const std::function<void(PtyProcess&, const std::string&)>& seen) {
    PtyProcess p(Command("apply", args), screen.columns(), kRows);
    EXPECT_TRUE(p.started());
    // A bound, not a wait: a hung apply fails the test instead of hanging it.
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (!p.eof() && std::chrono::steady_clock::now() < give_up) {
      std::string out = p.Read(milliseconds(500));
      if (out.empty()) continue;
      screen.Write(out);
      seen(p, out);
    }
    return p.Wait();
  }

  int64_t MutatingCalls() { return emu_->counters().mutating_calls; }
};

bool IsLaneRow(const std::string& row, const std::string& cluster) {
  for (const char* mark : {"  ", "✓ ", "✗ ", "… "})
    if (row.rfind(mark + cluster + " ", 0) == 0) return true;
  return false;
}

// What must hold at every moment: one row at most per lane, none reaching the
// last column, one total line at most. Returns true when a lane row was cut.
bool CheckScreen(const VtScreen& screen, const std::string& when) {
  auto all = screen.AllRows();
  for (int c = 0; c < kClusters; ++c) {
    int rows = 0;
    for (const auto& r : all) rows += IsLaneRow(r, ClusterName(c)) ? 1 : 0;
    EXPECT_LE(rows, 1) << when << ": lane " << ClusterName(c) << " shown " << rows << " times";
  }
  int totals = 0;
  for (const auto& r : all) totals += r.rfind("Applying:", 0) == 0 ? 1 : 0;
  EXPECT_LE(totals, 1) << when;
  bool cut = false;
  auto visible = screen.Rows();
  for (int i = 0; i < static_cast<int>(visible.size()); ++i) {
    bool lane = false;
    for (int c = 0; c < kClusters; ++c) lane = lane || IsLaneRow(visible[i], ClusterName(c));
    if (!lane) continue;
    EXPECT_FALSE(screen.LastColumnUsed(i)) << when << ": row " << i << " reaches the last column: " << visible[i];
    cut = cut || visible[i].find("…") != std::string::npos;
  }
  return cut;
}

// The end: each lane one "✓ … 3 created" row, no frame left.
void CheckFinalScreen(const VtScreen& screen) {
  auto all = screen.AllRows();
  for (int c = 0; c < kClusters; ++c) {
    int done = 0;
    for (const auto& r : all) done += r.rfind("✓ " + ClusterName(c) + "  3 created  ", 0) == 0 ? 1 : 0;
    EXPECT_EQ(done, 1) << ClusterName(c);
  }
  for (const auto& r : all) {
    EXPECT_EQ(r.rfind("Applying:", 0), std::string::npos) << "frame left behind";
    EXPECT_EQ(r.rfind("  " + ClusterName(0).substr(0, 10), 0), std::string::npos) << "lane row left: " << r;
  }
  bool summary = false;
  for (const auto& r : all) summary = summary || r.rfind("Apply complete: 12 applied, 0 failed", 0) == 0;
  EXPECT_TRUE(summary);
}

TEST_F(ApplyTerminalTest, AnsweringNoMakesNoMutatingCall) {
  VtScreen screen(kRows, 80);
  bool asked = false;
  int code = RunOnTerminal("--poll-initial-ms 20", screen, [&](PtyProcess& p, const std::string&) {
    for (const auto& r : screen.Rows())
      if (r.rfind("  Enter a value:", 0) == 0 && !asked) {
        asked = true;
        EXPECT_EQ(MutatingCalls(), 0);
        p.Type("no\r");
      }
  });
  EXPECT_TRUE(asked);
  EXPECT_EQ(code, 1);
  bool cancelled = false, question = false;
  for (const auto& r : screen.AllRows()) {
    cancelled = cancelled || r == "Apply cancelled: nothing was applied.";
    question = question || r == "Do you want to perform these actions?";
  }
  EXPECT_TRUE(question);
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(MutatingCalls(), 0);
  EXPECT_TRUE(LivePools().empty());
}

TEST_F(ApplyTerminalTest, AnsweringYesApplies) {
  VtScreen screen(kRows, 80);
  bool asked = false;
  int code = RunOnTerminal("--poll-initial-ms 20 --poll-max-ms 100", screen, [&](PtyProcess& p, const std::string&) {
    if (asked) return CheckScreen(screen, "during the apply"), void();
    for (const auto& r : screen.Rows())
      if (r.rfind("  Enter a value:", 0) == 0) {
        asked = true;
        EXPECT_EQ(MutatingCalls(), 0) << "nothing is changed before the answer";
        p.Type("yes\r");
        break;
      }
  });
  EXPECT_TRUE(asked);
  EXPECT_EQ(code, 0);
  CheckFinalScreen(screen);
  EXPECT_EQ(Route(kCreateRoute), 12);
  EXPECT_EQ(LivePools().size(), 12u);
}

TEST_F(ApplyTerminalTest, WithoutATerminalItRefusesAndChangesNothing) {
  std::string out;
  EXPECT_EQ(Run("apply", "--poll-initial-ms 20 < /dev/null", &out), 1) << out;
  EXPECT_NE(out.find("error: apply asks for approval before changing anything, and there is no "
                     "terminal to ask on"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("rerun with --auto-approve"), std::string::npos) << out;
  EXPECT_EQ(MutatingCalls(), 0);
}

class ApplyTerminalWidthTest : public ApplyTerminalTest, public ::testing::WithParamInterface<int> {};

TEST_P(ApplyTerminalWidthTest, LaneLinesFitTheWidth) {
  const int columns = GetParam();
  VtScreen screen(kRows, columns);
  bool cut = false;
  int frames = 0;
  int code = RunOnTerminal(std::string(kApplyArgs) + kTwoAtATime, screen, [&](PtyProcess&, const std::string& out) {
    frames += out.find("Applying:") != std::string::npos ? 1 : 0;
    cut = CheckScreen(screen, std::to_string(columns) + " columns") || cut;
  });
  EXPECT_EQ(code, 0);
  EXPECT_GT(frames, 3) << "the display was redrawn while operations ran";
  CheckFinalScreen(screen);
  // The lane lines are ~130 columns: cut at 80, whole at 200.
  EXPECT_EQ(cut, columns < 130);
}

INSTANTIATE_TEST_SUITE_P(Columns, ApplyTerminalWidthTest, ::testing::Values(80, 200));

// The widest line (in columns) of the frame that starts at `from` in `out`
// (after an erase), and where that frame ends; npos when it is not complete yet.
struct FrameInfo {
  int widest = 0;
  bool has_lane = false;
  size_t end = std::string::npos;
};
FrameInfo ReadFrame(const std::string& out, size_t from) {
  FrameInfo f;
  std::string line;
  for (size_t i = from; i < out.size(); ++i) {
    char c = out[i];
    if (c == '\033') {  // CSI: skip to its final byte
      while (i + 1 < out.size() && !std::isalpha(static_cast<unsigned char>(out[i + 1]))) ++i;
      ++i;
      continue;
    }
    if (c == '\r') continue;
    if (c != '\n') {
      line += c;
      continue;
    }
    f.widest = std::max(f.widest, apply::Columns(line));
    f.has_lane = f.has_lane || line.rfind("  research-training", 0) == 0;
    if (line.rfind("Applying:", 0) == 0) {
      f.end = i + 1;
      return f;
    }
    line.clear();
  }
  return f;
}

// The window narrows from 200 to 80 columns while lanes are in flight, then
// widens to 120: the program gets SIGWINCH and redraws at the new width, and
// nothing is left behind. The screen changes width between the last frame
// drawn at the old width and the first drawn at the new one, as a terminal
// that resized at that instant would (a frame drawn in the instant between
// the window's change and the program's next read of its size is every
// terminal program's race, and not what this checks).
TEST_F(ApplyTerminalTest, ResizedMidApplyRedrawsAtTheNewWidth) {
  VtScreen screen(kRows, 200);
  PtyProcess p(Command("apply", std::string(kApplyArgs) + kTwoAtATime), 200, kRows);
  ASSERT_TRUE(p.started());
  int resizes = 0;
  std::string held;  // output since the narrowing, not yet on the screen
  bool narrowing = false, cut_after_narrowing = false;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!p.eof() && std::chrono::steady_clock::now() < give_up) {
    std::string out = p.Read(milliseconds(500));
    if (out.empty()) continue;
    if (narrowing) {
      held += out;
      // The first complete frame with lanes that fits in 80 columns.
      for (size_t at = held.find("\033[J"); at != std::string::npos; at = held.find("\033[J", at + 1)) {
        FrameInfo f = ReadFrame(held, at + 3);
        if (f.end == std::string::npos) break;
        if (!f.has_lane || f.widest >= 80) continue;
        size_t erase = held.rfind("\r\033[", at);
        screen.Write(held.substr(0, erase));
        screen.Resize(kRows, 80);
        screen.Write(held.substr(erase));
        held.clear();
        narrowing = false;
        break;
      }
      if (narrowing) continue;
      cut_after_narrowing = CheckScreen(screen, "after narrowing") || cut_after_narrowing;
    } else {
      screen.Write(out);
      CheckScreen(screen, "after " + std::to_string(resizes) + " resizes");
    }
    bool in_flight = false, finished = false;
    for (const auto& r : screen.Rows()) {
      in_flight = in_flight || r.rfind("  " + ClusterName(0), 0) == 0;
      finished = finished || r.rfind("✓ ", 0) == 0;
    }
    if (resizes == 0 && in_flight) {
      p.Resize(80, kRows);
      narrowing = true;
      ++resizes;
    } else if (resizes == 1 && !narrowing && finished) {
      screen.Resize(kRows, 120);  // wider: frames of either width fit
      p.Resize(120, kRows);
      ++resizes;
    }
  }
  if (!held.empty()) screen.Write(held);
  EXPECT_EQ(p.Wait(), 0);
  EXPECT_EQ(resizes, 2);
  EXPECT_FALSE(narrowing) << "no frame was ever drawn at 80 columns";
  EXPECT_TRUE(cut_after_narrowing) << "lines were cut to 80 columns";
  CheckScreen(screen, "at the end");
  CheckFinalScreen(screen);
}

}  // namespace
}  // namespace tpu::cli
