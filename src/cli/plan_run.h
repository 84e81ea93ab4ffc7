// One run of load → refresh → plan, as `plan` and `apply` both start: the repo
// read from disk, a cloud session (emulator included), one refresh of the
// projects the targets name, and the plan computed from them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cloud_setup.h"
#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/model.h"
#include "plan/planner.h"

namespace tpu::cli {

struct PlanRunOptions {
  std::string repo_path = ".";
  CloudFlags cloud;
  plan::PlanOptions plan;
  bool include_operations = false;  // apply: operations earlier runs left running
};

struct PlanRun {
  manifest::Repo repo;
  std::unique_ptr<CloudSession> session;
  cloud::LiveState live;
  plan::Plan plan;
};

// Errors here are the kind that stop a run before any plan (an unreadable repo
// directory, bad flags, credentials, an unreachable API); manifest errors are
// not: they block their targets inside the plan.
Result<PlanRun> LoadRefreshPlan(const PlanRunOptions& options);

// The repo at `path` (a directory), loaded from disk.
Result<manifest::Repo> LoadRepoFromDisk(const std::string& path);

// --summary-over N and --full: how a large plan's text is shown (plan, apply).
void AddPlanTextFlags(CLI::App* cmd, int* summary_over, bool* full);

// Current UTC time as RFC 3339, for Plan::created_at.
std::string NowRfc3339();

}  // namespace tpu::cli
