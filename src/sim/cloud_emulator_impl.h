// Internals of CloudEmulator shared by cloud_emulator.cc (HTTP wiring, API
// requests) and sim_control.cc (the /sim/ endpoints). Not for other modules.
// One mutex guards the state, counters, faults and the recording; the
// condition variable wakes operation waiters whenever the state changes.
#pragma once

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "sim/cloud_emulator.h"
#include "sim/cloud_faults.h"
#include "sim/cloud_state.h"
#include "sim/sim_http.h"

namespace httplib {
class Server;
class Request;
class Response;
}

namespace tpu::sim {

struct SimContext;

class CloudEmulator::Impl {
 public:
  explicit Impl(CloudEmulatorOptions o);
  ~Impl();

  int64_t Now() const { return options.clock ? options.clock() : WallMs(); }
  static int64_t WallMs();

  // REQUIRES: mu held. Advances operations and writes the state file when
  // `ctx_changed` or the advance changed anything.
  void AdvanceAndPersist(bool ctx_changed);
  // REQUIRES: mu held. A context over the state for one request.
  SimContext Context();

  SimResponse Control(const SimRequest& req);        // /sim/…, takes mu
  SimResponse Api(const SimRequest& req, bool fail_operation);  // takes mu
  SimResponse WaitComputeOperation(const std::string& key);     // takes mu
  void Record(const SimRequest& req, const SimResponse& res);   // REQUIRES: mu held
  void Count(const SimRequest& req);                             // REQUIRES: mu held
  // REQUIRES: mu held. Operations running on each cluster an operation just
  // started on, for the peak counters.
  void CountPeaks(const std::vector<std::string>& clusters);
  Status ReclaimLocked(const json& body);                        // REQUIRES: mu held
  Status Load();  // the state file, the capacity and faults of the options, the record file
  // One HTTP request: control (/sim/…), or the API behind its token check and faults.
  void Handle(const httplib::Request& hreq, httplib::Response& hres);
  bool Admit(const SimRequest& req, const httplib::Request& hreq, httplib::Response& hres, FaultDecision* fault);

  CloudEmulatorOptions options;
  mutable std::mutex mu;
  std::condition_variable cv;
  CloudState state;
  CloudCounters counters;
  FaultInjector faults;
  std::mt19937_64 rng;
  std::ofstream record;
  Status persist_error;  // first state-file write failure, reported on /sim/state

  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  int port = 0;
};

// "/v1/projects/{project}/locations/-/clusters", the route a request counts under.
std::string RoutePattern(const SimRequest& req);
// Splits a path into its non-empty segments.
std::vector<std::string> SplitPath(const std::string& path);

}  // namespace tpu::sim
