// bench/RESULTS.md: the command, the machine, the fleet, every figure with its
// target and whether it was met, and (if present) the profile notes kept in
// bench/PROFILE.md, which a person writes after looking at a profile.
#pragma once

#include <map>
#include <string>

#include "bench/results.h"

namespace tpu::bench {

struct ReportHeader {
  std::string command;
  std::string size;
  std::string fleet;         // one line describing the generated fleet
  std::string started_utc, finished_utc;
  std::string load_before, load_after;  // /proc/loadavg
  std::string profile_notes_file;       // "" or bench/PROFILE.md
  // "" or an earlier report: its figures become the "before" column of a
  // before → after table of every figure with a target.
  std::string before_file;
  std::string before_label;  // what the earlier report was ("3c97ac2, 2026-11-23")
};

// The figures of a report RenderReport wrote: "scenario|figure" → value as
// written ("6.08 s").
std::map<std::string, std::string> ReadReportFigures(const std::string& markdown);

std::string RenderReport(const ReportHeader& h, const Results& r);
// "model name" from /proc/cpuinfo, cores, memory, kernel.
std::string MachineLine();
std::string LoadAvg();
std::string UtcNow();

}  // namespace tpu::bench
