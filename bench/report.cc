// RESULTS.md rendering (see report.h).
#include "bench/report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

namespace tpu::bench {
namespace {

std::string Number(double v) {
  char buf[64];
  if (v >= 100) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (v >= 10) std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (v >= 0.1) std::snprintf(buf, sizeof buf, "%.2f", v);
  else std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string LoadAvg() {
  std::string s = ReadAll("/proc/loadavg");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string MachineLine() {
  std::string model = "unknown CPU";
  std::istringstream cpu(ReadAll("/proc/cpuinfo"));
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  long mem_kb = 0;
  std::istringstream mem(ReadAll("/proc/meminfo"));
  for (std::string line; std::getline(mem, line);)
    if (line.rfind("MemTotal:", 0) == 0) mem_kb = std::stol(line.substr(9));
  struct utsname u {};
  ::uname(&u);
  return model + ", " + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + " cores, " +
         std::to_string(mem_kb / 1024 / 1024) + " GiB, " + u.sysname + " " + u.release;
}

std::map<std::string, std::string> ReadReportFigures(const std::string& markdown) {
  std::map<std::string, std::string> out;
  std::istringstream in(markdown);
  std::string line, scenario;
  const std::string heading = "## Scenario ";
  while (std::getline(in, line)) {
    if (line.rfind(heading, 0) == 0) {
      scenario = line.substr(heading.size());
      continue;
    }
    if (line.rfind("## ", 0) == 0) scenario.clear();  // a section of another kind
    if (scenario.empty() || line.rfind("| ", 0) != 0 || line.rfind("| figure ", 0) == 0) continue;
    // | figure | value | target | met | note |
    std::vector<std::string> cells;
    size_t at = 1;
    for (size_t bar; (bar = line.find(" |", at)) != std::string::npos; at = bar + 2)
      cells.push_back(line.substr(at + 1, bar - at - 1));
    if (cells.size() >= 2) out[scenario + "|" + cells[0]] = cells[1];
  }
  return out;
}

std::string RenderReport(const ReportHeader& h, const Results& r) {
  std::ostringstream o;
  o << "# Benchmark results (`bench/`, issue 9)\n\n"
    << "Regenerate with `" << h.command << "` (size `" << h.size << "`).\n\n"
    << "- Run: " << h.started_utc << " → " << h.finished_utc << "\n"
    << "- Machine: " << MachineLine() << "\n"
    << "- Load average (1/5/15 min, runnable/total, last pid) before: `" << h.load_before
    << "`, after: `" << h.load_after << "`. The machine is shared with other builds, so absolute "
    << "times are noisy; every target is a ratio against a baseline or bound measured in the same run, "
    << "except the absolute ones (RSS, incremental latency, idle CPU).\n"
    << "- Fleet: " << h.fleet << "\n";
  for (const auto& n : r.notes) o << "- " << n << "\n";
  int met = 0, missed = 0;
  for (const auto& f : r.figures)
    if (f.met) (*f.met ? met : missed)++;
  o << "\nTargets: **" << met << " met, " << missed << " missed**.\n";
  // Scenarios 3 and 5 share a daemon, so their rows interleave: group by scenario.
  std::vector<Figure> rows = r.figures;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Figure& a, const Figure& b) { return a.scenario < b.scenario; });
  std::string scenario;
  for (const auto& f : rows) {
    if (f.scenario != scenario) {
      scenario = f.scenario;
      o << "\n## Scenario " << scenario << "\n\n| figure | value | target | met | note |\n|---|---|---|---|---|\n";
    }
    o << "| " << f.name << " | " << (f.value ? Number(*f.value) + " " + f.unit : "**not measured**")
      << " | " << f.target << " | " << (f.met ? (*f.met ? "yes" : "**no**") : "") << " | " << f.note
      << " |\n";
  }
  if (!h.before_file.empty()) {
    const std::map<std::string, std::string> before = ReadReportFigures(ReadAll(h.before_file));
    o << "\n## Before → after\n\nBefore: " << (h.before_label.empty() ? h.before_file : h.before_label)
      << ". Every figure with a target; \"—\" where the earlier run had no such figure.\n\n"
      << "| scenario | figure | before | after | target | met |\n|---|---|---|---|---|---|\n";
    for (const auto& f : rows) {
      if (f.target.empty()) continue;
      auto b = before.find(f.scenario + "|" + f.name);
      o << "| " << f.scenario << " | " << f.name << " | " << (b == before.end() ? "—" : b->second) << " | "
        << (f.value ? Number(*f.value) + " " + f.unit : "**not measured**") << " | " << f.target << " | "
        << (f.met ? (*f.met ? "yes" : "**no**") : "") << " |\n";
    }
  }
  if (!h.profile_notes_file.empty()) {
    const std::string notes = ReadAll(h.profile_notes_file);
    if (!notes.empty()) o << "\n" << notes;
  }
  return o.str();
}

}  // namespace tpu::bench
