// Refresh over an event loop (cloud/list_fanout.h): every project's lists are
// in flight together and answered in any order with no thread of the
// refresh's own; a retried page restarts its list and changes nothing; the
// first failing project names the error. Transports here wrap a real one to
// the emulator, to hold answers back or to inject one failure.
#include "cloud/refresh.h"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/fake_env.h"
#include "cloud/emulator_fixture.h"
#include "http/curl_multi.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

// A loop that has not answered yet: Submit keeps each request and its
// callback until the test answers them, in the order it likes, from its own
// thread (the loop's place).
class HeldTransport : public http::HttpTransport {
 public:
  struct Held {
    http::HttpRequest request;
    Done done;
  };
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override { return inner_.Send(request); }
  void Submit(http::HttpRequest request, Done done) override {
    std::lock_guard<std::mutex> lock(mu_);
    held_.push_back({std::move(request), std::move(done)});
    peak_ = std::max(peak_, held_.size());
    changed_.notify_all();
  }
  // Waits until `n` are held; false if they are not within a generous while.
  bool AwaitHeld(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return held_.size() >= n; });
  }
  // Waits for requests to answer: empty once the caller said it is done.
  std::vector<Held> TakeAll() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !held_.empty() || caller_done_; });
    return std::exchange(held_, {});
  }
  void CallerDone() {
    std::lock_guard<std::mutex> lock(mu_);
    caller_done_ = true;
    changed_.notify_all();
  }
  size_t peak() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }
  // Answers as the network would.
  void Answer(Held& h) { h.done(inner_.Send(h.request)); }

 private:
  http::CurlTransport inner_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Held> held_;
  size_t peak_ = 0;
  bool caller_done_ = false;
};

// Sends through a real transport, records every URL, and answers instead
// whenever `fault` returns a response.
class FaultTransport : public http::HttpTransport {
 public:
  using Fault = std::function<std::optional<http::HttpResponse>(const http::HttpRequest&)>;
  explicit FaultTransport(Fault fault) : fault_(std::move(fault)) {}
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      urls_.push_back(request.url);
    }
    if (auto injected = fault_(request)) return *injected;
    return inner_.Send(request);
  }
  std::vector<std::string> urls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return urls_;
  }

 private:
  http::CurlTransport inner_;
  Fault fault_;
  mutable std::mutex mu_;
  std::vector<std::string> urls_;
};

http::HttpResponse ErrorResponse(int code, const std::string& status) {
  http::HttpResponse r;
  r.status = code;
  r.headers = {{"content-type", "application/json"}};
  r.body = json{{"error", {{"code", code}, {"message", "injected"}, {"status", status}}}}.dump();
  return r;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

size_t ThreadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

void ExpectSameLiveState(const LiveState& got, const LiveState& want) {
  ASSERT_EQ(got.projects.size(), want.projects.size());
  for (const auto& [project, w] : want.projects) {
    ASSERT_TRUE(got.projects.contains(project)) << project;
    const ProjectState& g = got.projects.at(project);
    EXPECT_EQ(g.project, w.project);
    EXPECT_EQ(g.clusters, w.clusters) << project;
    EXPECT_EQ(g.workload_policies, w.workload_policies) << project;
    EXPECT_EQ(g.instance_templates, w.instance_templates) << project;
    EXPECT_EQ(g.instance_group_managers, w.instance_group_managers) << project;
    EXPECT_EQ(g.reservations, w.reservations) << project;
    EXPECT_EQ(g.running_operations, w.running_operations) << project;
  }
}

class RefreshFanoutTest : public testing::EmulatorTest {
 protected:
  // `pools` CPU node pools in one regional cluster of `project` (3 instance
  // groups each), a template and a MIG of ours.
  void SeedProject(const std::string& project, int pools) {
    json seed = {{"clusters", json::array({{{"project", project}, {"location", "us-east5"}, {"name", "c"}}})},
                 {"nodePools", json::array()}};
    for (int i = 0; i < pools; ++i) {
      seed["nodePools"].push_back({{"project", project}, {"location", "us-east5"}, {"cluster", "c"},
                                   {"nodePool", {{"name", "np-" + std::to_string(i)},
                                                 {"config", {{"machineType", "e2-standard-4"}}},
                                                 {"initialNodeCount", 1 + i % 2}}}});
    }
    Control("seed", seed);
    InstanceTemplate t;
    t.name = "tmpl";
    t.machine_type = "n2-standard-2";
    ASSERT_TRUE(cloud_->compute().InsertInstanceTemplate(project, t).ok());
    InstanceGroupManager m;
    m.name = "mig";
    m.zone = "us-east5-b";
    m.instance_template = "global/instanceTemplates/tmpl";
    m.target_size = 2;
    auto op = cloud_->compute().InsertInstanceGroupManager(project, m);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    AwaitDone(*op);
  }
  std::unique_ptr<CloudConnection> ConnectionOver(std::unique_ptr<http::HttpTransport> transport) {
    return std::make_unique<CloudConnection>(std::move(transport), std::make_unique<StaticTokenProvider>("emu-token"),
                                             cloud_->endpoints());
  }
};

// Twelve projects' 48 lists are all submitted before any is answered; the
// refresh waits on its own thread, starting none, and takes the answers in
// reverse order: no project waits for another.
TEST_F(RefreshFanoutTest, EveryProjectsListsAreInFlightTogetherOnNoThreadOfItsOwn) {
  std::vector<std::string> projects;
  for (int i = 0; i < 12; ++i) {
    projects.push_back("fan-" + std::to_string(i));
    SeedProject(projects.back(), 1 + i % 4);
  }
  auto clean = cloud_->Refresh(projects);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();

  auto transport = std::make_unique<HeldTransport>();
  HeldTransport* held = transport.get();
  auto connection = ConnectionOver(std::move(transport));
  const size_t threads_before = ThreadsOfThisProcess();
  std::optional<Result<LiveState>> live;
  std::jthread refresh([&] {
    live = connection->Refresh(projects);
    held->CallerDone();
  });
  const size_t kLists = 4 * projects.size();
  ASSERT_TRUE(held->AwaitHeld(kLists)) << "the lists were not all submitted at once";
  EXPECT_EQ(ThreadsOfThisProcess(), threads_before + 1) << "only the thread this test runs the refresh on";
  EXPECT_EQ(held->peak(), kLists);
  for (auto pending = held->TakeAll(); !pending.empty(); pending = held->TakeAll()) {
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) held->Answer(*it);  // newest first
  }
  refresh.join();
  ASSERT_TRUE(live->ok()) << live->status().ToString();
  ExpectSameLiveState(**live, *clean);
}

// Over the real event loop, as `plan` runs it: the calls in flight at once go
// beyond the 8 the refresh's threads used to allow (20 projects, 80 lists).
TEST_F(RefreshFanoutTest, OverTheEventLoopManyProjectsListsAreInFlightAtOnce) {
  std::vector<std::string> projects;
  for (int i = 0; i < 20; ++i) {
    projects.push_back("loop-" + std::to_string(i));
    SeedProject(projects.back(), 1 + i % 3);
  }
  auto clean = cloud_->Refresh(projects);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  auto loop = std::make_unique<http::CurlMultiLoop>();
  http::CurlMultiLoop* multi = loop.get();
  auto connection = ConnectionOver(std::move(loop));
  auto live = connection->Refresh(projects);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ExpectSameLiveState(*live, *clean);
  EXPECT_GT(multi->peak_in_flight(), 8);
  EXPECT_EQ(connection->calls().reads(), 4 * 20);
}

// A 503 on the second page of one project's instance groups: that list is read
// again from its first page after its backoff, and the refresh is the same.
TEST_F(RefreshFanoutTest, AFailedSecondPageRestartsItsListAndChangesNothing) {
  SeedProject("p0", 2);
  SeedProject("p1", 200);  // 600 GKE instance groups + ours: two pages
  SeedProject("p2", 3);
  const std::vector<std::string> projects = {"p0", "p1", "p2"};
  RefreshOptions with_ops;
  with_ops.include_operations = true;
  auto clean = cloud_->Refresh(projects, with_ops);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();

  const std::string igms = "projects/p1/aggregated/instanceGroupManagers";
  bool failed_once = false;
  auto transport = std::make_unique<FaultTransport>([&](const http::HttpRequest& r) -> std::optional<http::HttpResponse> {
    if (failed_once || !Contains(r.url, igms) || !Contains(r.url, "pageToken=")) return std::nullopt;
    failed_once = true;
    return ErrorResponse(503, "UNAVAILABLE");
  });
  FaultTransport* faults = transport.get();
  auto connection = ConnectionOver(std::move(transport));
  FakeEnv env;
  RefreshOptions options = with_ops;
  options.clock = &env;
  auto live = connection->Refresh(projects, options);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ExpectSameLiveState(*live, *clean);
  EXPECT_EQ(live->projects.at("p1").clusters.at(0).node_pools.size(), 200u);
  EXPECT_GT(env.slept(), std::chrono::milliseconds(0)) << "the retry waited its backoff";
  std::vector<bool> paged;  // p1's instance-group calls: did each ask for a later page?
  for (const auto& url : faults->urls())
    if (Contains(url, igms)) paged.push_back(Contains(url, "pageToken="));
  EXPECT_EQ(paged, (std::vector<bool>{false, true, false, true})) << "page 1, page 2 (503), page 1 again, page 2";
}

// A 403 is not retried, and of two failing projects the first named is the
// refresh's error, whichever failed first.
TEST_F(RefreshFanoutTest, ANonRetryableErrorFailsTheRefreshWithTheFirstFailingProject) {
  for (const char* p : {"ok", "denied", "also-denied"}) SeedProject(p, 2);
  auto transport = std::make_unique<FaultTransport>([](const http::HttpRequest& r) -> std::optional<http::HttpResponse> {
    if (Contains(r.url, "projects/denied/aggregated/instanceTemplates") ||
        Contains(r.url, "projects/also-denied/locations/-/clusters"))
      return ErrorResponse(403, "PERMISSION_DENIED");
    return std::nullopt;
  });
  FaultTransport* faults = transport.get();
  auto connection = ConnectionOver(std::move(transport));
  FakeEnv env;
  RefreshOptions options;
  options.clock = &env;
  auto live = connection->Refresh({"ok", "denied", "also-denied"}, options);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), Status::Code::kPermissionDenied) << live.status().ToString();
  EXPECT_EQ(live.status().message().rfind("refresh project denied: ", 0), 0u) << live.status().message();
  int template_reads = 0;
  for (const auto& url : faults->urls()) template_reads += Contains(url, "projects/denied/aggregated/instanceTemplates");
  EXPECT_EQ(template_reads, 1) << "a 403 is not retried";
  EXPECT_EQ(env.slept(), std::chrono::steady_clock::duration::zero());
}

}  // namespace
}  // namespace tpu::cloud
