// Lanes and their lines for the progress display (see progress_lanes.h).
#include "apply/progress_lanes.h"

#include <algorithm>
#include <map>

namespace tpu::apply {
namespace {

using State = TaskResult::State;

// "gke:P/L/C" → {P, C}; "" when the lane is not a GKE cluster's.
struct ClusterOfLane {
  std::string project, location, cluster;
};
bool ParseLane(const std::string& lane, ClusterOfLane* out) {
  if (lane.rfind("gke:", 0) != 0) return false;
  std::string rest = lane.substr(4);
  auto a = rest.find('/');
  auto b = a == std::string::npos ? a : rest.find('/', a + 1);
  if (b == std::string::npos) return false;
  *out = {rest.substr(0, a), rest.substr(a + 1, b - a - 1), rest.substr(b + 1)};
  return true;
}

// The project of a resource id ("instanceTemplate:P/N" → P); "" for an await.
std::string ProjectOfId(const std::string& id) {
  auto colon = id.find(':');
  if (colon == std::string::npos || id.rfind("await:", 0) == 0) return "";
  return id.substr(colon + 1, id.find('/', colon) - colon - 1);
}

// The display's lane is the cluster (the scheduler's group, "gke:P/L/C"):
// the scheduler's own lanes are node pools, and a line per pool would not fit.
std::string KeyOf(const TaskResult& t) {
  if (!t.group.empty()) return t.group;
  if (!t.lane.empty()) return t.lane;
  std::string project = ProjectOfId(t.id);
  return "compute:" + (project.empty() ? std::string("earlier operations") : project);
}

std::string PastTense(const std::string& verb) {
  if (verb.empty()) return "done";
  if (verb.back() == 'e') return verb + "d";
  return verb + "ed";
}

// How many bytes the UTF-8 sequence starting with `c` takes.
size_t SequenceLength(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c >> 5) == 0x6) return 2;
  if ((c >> 4) == 0xe) return 3;
  if ((c >> 3) == 0x1e) return 4;
  return 1;  // a stray continuation byte counts as a column of its own
}

// "create v6e-0, v6e-1 +3", or "delete a-0, create b-0 +1" when verbs differ.
std::string ActionsText(const std::vector<const TaskResult*>& running) {
  std::string out;
  std::string last_verb;
  size_t shown = 0;
  for (const TaskResult* t : running) {
    if (shown == 2) break;
    ActionLabel l = LabelOf(*t);
    if (!out.empty()) out += ", ";
    if (l.verb != last_verb) out += l.verb + " ";
    out += l.name;
    last_verb = l.verb;
    ++shown;
  }
  if (running.size() > shown) out += " +" + std::to_string(running.size() - shown);
  return out;
}

std::string WaitOfLane(const std::vector<const TaskResult*>& running) {
  if (running.size() == 1) return WaitText(*running.front());
  int operations = 0;
  for (const TaskResult* t : running)
    if (WaitText(*t).find("waiting for operation") != std::string::npos) ++operations;
  if (operations == static_cast<int>(running.size()))
    return "waiting for " + std::to_string(operations) + " operations";
  // Something other than an operation is worth seeing: a retry, a stockout.
  for (const TaskResult* t : running) {
    std::string w = WaitText(*t);
    if (w.find("waiting for operation") == std::string::npos) return LabelOf(*t).name + ": " + w;
  }
  return "";
}

}  // namespace

int LaneView::Finished() const {
  int n = 0;
  for (const TaskResult* t : tasks) n += IsFinal(t->state) ? 1 : 0;
  return n;
}

bool LaneView::Started() const {
  for (const TaskResult* t : tasks)
    if (t->state != State::kPending) return true;
  return false;
}

bool LaneView::AllSucceeded() const {
  for (const TaskResult* t : tasks)
    if (t->state != State::kDone) return false;
  return true;
}

SteadyTime LaneView::FirstStart() const {
  SteadyTime first{};
  for (const TaskResult* t : tasks)
    if (t->started != SteadyTime{} && (first == SteadyTime{} || t->started < first)) first = t->started;
  return first;
}

SteadyTime LaneView::LastFinish() const {
  SteadyTime last{};
  for (const TaskResult* t : tasks)
    if (IsFinal(t->state) && t->finished > last) last = t->finished;
  return last;
}

std::vector<LaneView> GroupLanes(const std::vector<TaskResult>& tasks) {
  std::vector<LaneView> lanes;
  std::map<std::string, size_t> index;
  for (const auto& t : tasks) {
    std::string key = KeyOf(t);
    auto [it, added] = index.emplace(key, lanes.size());
    if (added) lanes.push_back({key, "", {}});
    lanes[it->second].tasks.push_back(&t);
  }
  // Names: the cluster alone, unless two lanes share it.
  std::map<std::string, int> clusters;
  for (const auto& l : lanes) {
    ClusterOfLane c;
    if (ParseLane(l.key, &c)) ++clusters[c.cluster];
  }
  for (auto& l : lanes) {
    ClusterOfLane c;
    if (ParseLane(l.key, &c)) {
      l.name = clusters[c.cluster] == 1 ? c.cluster : c.project + "/" + c.cluster;
    } else {
      l.name = l.key.substr(l.key.find(':') + 1) + " compute";
    }
  }
  // Two lanes of one project and cluster name in two locations keep the location.
  std::map<std::string, int> names;
  for (const auto& l : lanes) ++names[l.name];
  for (auto& l : lanes) {
    ClusterOfLane c;
    if (names[l.name] > 1 && ParseLane(l.key, &c)) l.name = c.project + "/" + c.location + "/" + c.cluster;
  }
  return lanes;
}

ActionLabel LabelOf(const TaskResult& t) {
  if (t.id.rfind("await:", 0) == 0) return {"await", t.id.substr(6)};
  std::string verb = t.description.substr(0, t.description.find(' '));
  std::string name = t.id;
  auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  else if (auto colon = name.find(':'); colon != std::string::npos) name = name.substr(colon + 1);
  if (verb == t.description) verb.clear();
  return {verb, name};
}

std::string WaitText(const TaskResult& t) {
  if (t.note.empty()) return t.state == State::kRunning ? "starting" : "";
  auto colon = t.note.find(": ");
  if (colon == std::string::npos) return t.note;
  std::string step = t.note.substr(0, colon);
  auto space = step.find_last_of(' ');
  // A step that names its resource ("delete node pool P/L/C/N"): the line
  // names the resource already, so only the step's verb is kept, and only
  // when it differs from the action's (the delete half of a replace).
  if (space == std::string::npos || step.find('/', space) == std::string::npos) return t.note;
  std::string rest = t.note.substr(colon + 2);
  step = step.substr(0, space);
  for (const char* suffix : {" node pool", " of", " workload policy", " instance template",
                             " managed instance group", " instance group manager"}) {
    std::string s = suffix;
    if (step.size() > s.size() && step.compare(step.size() - s.size(), s.size(), s) == 0)
      step.erase(step.size() - s.size());
  }
  if (step == LabelOf(t).verb || step == "wait for") return rest;
  return step + ": " + rest;
}

std::string Elapsed(std::chrono::steady_clock::duration d) {
  long ms = std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  char buf[32];
  if (ms < 60000) {
    std::snprintf(buf, sizeof buf, "%.1fs", ms / 1000.0);
  } else if (ms < 3600000) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", ms / 60000, ms / 1000 % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", ms / 3600000, ms / 60000 % 60);
  }
  return buf;
}

int Columns(const std::string& text) {
  int n = 0;
  for (size_t i = 0; i < text.size(); i += SequenceLength(static_cast<unsigned char>(text[i]))) ++n;
  return n;
}

std::string FitColumns(const std::string& text, int columns) {
  if (columns <= 0) return "";
  if (Columns(text) <= columns) return text;
  std::string out;
  int n = 0;
  for (size_t i = 0; i < text.size() && n < columns - 1; ++n) {
    size_t len = std::min(SequenceLength(static_cast<unsigned char>(text[i])), text.size() - i);
    out.append(text, i, len);
    i += len;
  }
  return out + "…";
}

std::string LaneLine(const LaneView& lane, SteadyTime now, int name_width, int columns) {
  std::vector<const TaskResult*> running;
  const TaskResult* next = nullptr;
  for (const TaskResult* t : lane.tasks) {
    if (t->state == State::kRunning) running.push_back(t);
    else if (t->state == State::kPending && !next) next = t;
  }
  std::string name = FitColumns(lane.name, std::max(8, name_width));
  name += std::string(std::max(0, name_width - Columns(name)), ' ');
  std::string tail = "  " + Elapsed(now - lane.FirstStart()) + "  " + std::to_string(lane.Finished()) +
                     "/" + std::to_string(lane.tasks.size());
  std::string actions, wait;
  if (!running.empty()) {
    actions = ActionsText(running);
    wait = WaitOfLane(running);
  } else if (next) {
    ActionLabel l = LabelOf(*next);
    actions = "next: " + l.verb + " " + l.name;
    wait = "queued";
  }
  // The name and the tail stay whole; the actions and the wait share the rest.
  int room = columns - Columns(name) - Columns(tail) - 2;
  std::string middle = actions;
  if (room <= 0) return FitColumns(name + tail, columns);
  if (Columns(actions) > room) {
    middle = FitColumns(actions, room);
  } else if (!wait.empty() && room - Columns(actions) > 2) {
    middle += "  " + FitColumns(wait, room - Columns(actions) - 2);
  }
  middle += std::string(std::max(0, room - Columns(middle)), ' ');
  return name + "  " + middle + tail;
}

std::string FinishedLaneText(const LaneView& lane) {
  std::string what;
  if (lane.tasks.size() == 1) {
    const TaskResult& t = *lane.tasks.front();
    ActionLabel l = LabelOf(t);
    what = l.verb + " " + l.name;
    if (t.state != State::kDone) what += " " + std::string(StateName(t.state));
    if (!t.status.ok()) what += ": " + t.status.message();
  } else {
    std::vector<std::pair<std::string, int>> counts;  // in order of first appearance
    auto bump = [&counts](const std::string& k) {
      for (auto& [key, n] : counts)
        if (key == k) return void(++n);
      counts.push_back({k, 1});
    };
    for (const TaskResult* t : lane.tasks)
      bump(t->state == State::kDone ? PastTense(LabelOf(*t).verb) : StateName(t->state));
    for (const auto& [k, n] : counts) what += (what.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  }
  // A lane that never started (skipped, cancelled before its turn) has no time.
  if (lane.FirstStart() == SteadyTime{}) return lane.name + "  " + what;
  return lane.name + "  " + what + "  " + Elapsed(lane.LastFinish() - lane.FirstStart());
}

std::string TotalLine(const std::vector<TaskResult>& tasks, SteadyTime start, SteadyTime now) {
  int finished = 0, running = 0, failed = 0, skipped = 0, waiting = 0;
  for (const auto& t : tasks) {
    finished += IsFinal(t.state) ? 1 : 0;
    running += t.state == State::kRunning ? 1 : 0;
    failed += t.state == State::kFailed ? 1 : 0;
    skipped += t.state == State::kSkipped || t.state == State::kCancelled ? 1 : 0;
    waiting += t.state == State::kWaitingForCapacity ? 1 : 0;
  }
  std::string s = "Applying: " + std::to_string(finished) + "/" + std::to_string(tasks.size()) +
                  " done, " + std::to_string(running) + " in flight";
  if (failed) s += ", " + std::to_string(failed) + " failed";
  if (skipped) s += ", " + std::to_string(skipped) + " skipped or cancelled";
  if (waiting) s += ", " + std::to_string(waiting) + " waiting for capacity";
  return s + "  " + Elapsed(now - start);
}

}  // namespace tpu::apply
