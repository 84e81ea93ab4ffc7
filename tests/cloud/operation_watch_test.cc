// OperationWatch against the cloud emulator over a real event loop: polls of
// a busy project go out as one list call, those of a project with one or two
// operations running as GETs, Compute's filtered list answers what still runs
// and GETs read what it leaves out.
#include "cloud/operation_watch.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "cloud/emulator_fixture.h"
#include "http/curl_multi.h"
#include "http/curl_transport.h"

namespace tpu::cloud {
namespace {

// The emulator (its operations slow, as given), and a connection to it whose
// transport is the event loop, as the real binary's is.
class OperationWatchTest : public ::testing::Test {
 protected:
  void Start(std::map<std::string, int> op_latency_ms, bool event_loop = true) {
    sim::CloudEmulatorOptions options;
    options.op_latency_ms = std::move(op_latency_ms);
    emulator_ = std::make_unique<sim::CloudEmulator>(options);
    ASSERT_TRUE(emulator_->Start().ok());
    Endpoints endpoints;
    endpoints.container_root = emulator_->endpoint() + "/";
    endpoints.compute_v1 = emulator_->endpoint() + "/compute/v1/";
    std::unique_ptr<http::HttpTransport> transport;
    if (event_loop) transport = std::make_unique<http::CurlMultiLoop>();
    else transport = std::make_unique<http::CurlTransport>();
    cloud_ = std::make_unique<CloudConnection>(std::move(transport), std::make_unique<StaticTokenProvider>("watch-token"),
                                               endpoints);
    // A window long enough that every poll a test makes in a row joins one batch.
    watch_ = std::make_unique<OperationWatch>(&cloud_->poller(), &cloud_->gke(), &cloud_->compute(),
                                              &cloud_->transport(),
                                              OperationWatch::Options{std::chrono::milliseconds(200), 3});
  }
  void TearDown() override {
    watch_.reset();
    cloud_.reset();
    emulator_.reset();
  }

  // Polls every operation through the watch and waits for every answer.
  std::vector<ApiResult<Operation>> PollAll(const std::vector<Operation>& ops) {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<ApiResult<Operation>>> answers(ops.size());
    size_t left = ops.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      watch_->Poll(ops[i], [&, i](ApiResult<Operation> r) {
        std::lock_guard<std::mutex> l(mu);
        answers[i] = std::move(r);
        --left;
        cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return left == 0; });
    std::vector<ApiResult<Operation>> out;
    for (auto& a : answers) out.push_back(std::move(*a));
    return out;
  }

  int64_t Calls(const std::string& route) {
    auto c = emulator_->counters().calls_by_route;
    return c.count(route) ? c[route] : 0;
  }

  NodePool Pool(const std::string& name) {
    NodePool p;
    p.name = name;
    p.machine_type = "e2-standard-4";
    p.node_count = 1;
    return p;
  }

  std::unique_ptr<sim::CloudEmulator> emulator_;
  std::unique_ptr<CloudConnection> cloud_;
  std::unique_ptr<OperationWatch> watch_;
};

const char kGkeList[] = "GET /v1/projects/{project}/locations/-/operations";
const char kGkeGet[] = "GET /v1/projects/{project}/locations/{location}/operations/{operation}";

TEST_F(OperationWatchTest, PollsOfABusyProjectGoOutAsOneListAndOfAQuietOneAsGets) {
  Start({{"default", 600'000}});
  // Two clusters of one project, three creates each (under the quota of 5).
  std::vector<Operation> ops;
  for (const char* cluster : {"a", "b"}) {
    ASSERT_TRUE(emulator_->EnsureCluster("proj-w", "us-east5", cluster).ok());
    for (int i = 0; i < 3; ++i) {
      auto op = cloud_->gke().CreateNodePool({"proj-w", "us-east5", cluster}, Pool("np-" + std::to_string(i)));
      ASSERT_TRUE(op.ok()) << op.status().ToString();
      ops.push_back(*op);
    }
  }
  auto answers = PollAll(ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_EQ(answers[i]->name, ops[i].name);
    EXPECT_FALSE(answers[i]->done());
  }
  EXPECT_EQ(Calls(kGkeList), 1);
  EXPECT_EQ(Calls(kGkeGet), 0);
  EXPECT_EQ(watch_->counts().lists, 1);

  // Two at once, while six are known to run: still one list.
  answers = PollAll({ops[0], ops[4]});
  ASSERT_TRUE(answers[0].ok() && answers[1].ok());
  EXPECT_EQ(answers[1]->name, ops[4].name);
  EXPECT_EQ(Calls(kGkeList), 2);
  EXPECT_EQ(Calls(kGkeGet), 0);

  // A project with only two operations running: a list would cost as much as their GETs.
  ASSERT_TRUE(emulator_->EnsureCluster("proj-v", "us-east5", "c").ok());
  std::vector<Operation> two;
  for (int i = 0; i < 2; ++i) {
    auto op = cloud_->gke().CreateNodePool({"proj-v", "us-east5", "c"}, Pool("np-" + std::to_string(i)));
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    two.push_back(*op);
  }
  answers = PollAll(two);
  ASSERT_TRUE(answers[0].ok() && answers[1].ok());
  EXPECT_EQ(answers[0]->name, two[0].name);
  EXPECT_EQ(Calls(kGkeList), 2);
  EXPECT_EQ(Calls(kGkeGet), 2);
}

// A poll not due for a minute is answered at once when a list sent for
// others of its project shows its operation done.
TEST_F(OperationWatchTest, AListForOthersAnswersAWaitingPollWhoseOperationIsDone) {
  Start({{"default", 600'000}, {"CREATE_NODE_POOL", 0}});
  ASSERT_TRUE(emulator_->EnsureCluster("proj-s", "us-east5", "c").ok());
  const ClusterRef cluster{"proj-s", "us-east5", "c"};
  std::vector<Operation> resizes;
  Operation created;
  for (int i = 0; i < 4; ++i) {
    auto op = cloud_->gke().CreateNodePool(cluster, Pool("np-" + std::to_string(i)));
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    created = *op;  // done as soon as the emulator next looks
    if (i == 3) break;
    auto resize = cloud_->gke().SetNodePoolSize({cluster, "np-" + std::to_string(i)}, 2);
    ASSERT_TRUE(resize.ok()) << resize.status().ToString();
    resizes.push_back(*resize);  // ten minutes
  }
  std::mutex mu;
  std::condition_variable cv;
  std::optional<ApiResult<Operation>> early;
  watch_->PollAfter(created, std::chrono::minutes(1), std::chrono::milliseconds(10), [&](ApiResult<Operation> r) {
    std::lock_guard<std::mutex> l(mu);
    early = std::move(r);
    cv.notify_all();
  });
  auto answers = PollAll(resizes);
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_FALSE(a->done());
  }
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return early.has_value(); }))
      << "the done operation's poll waited for its own time";
  ASSERT_TRUE(early->ok()) << early->status().ToString();
  EXPECT_EQ((*early)->name, created.name);
  EXPECT_TRUE((*early)->done());
  EXPECT_EQ(Calls(kGkeList), 1);
  EXPECT_EQ(Calls(kGkeGet), 0);
}

// A blocking transport has no loop to wait on: a poll put off for a minute
// goes out at once, on the calling thread, as a GET.
TEST_F(OperationWatchTest, WithoutAnEventLoopAPollGoesOutAtOnce) {
  Start({{"default", 600'000}}, /*event_loop=*/false);
  ASSERT_TRUE(emulator_->EnsureCluster("proj-b", "us-east5", "c").ok());
  auto op = cloud_->gke().CreateNodePool({"proj-b", "us-east5", "c"}, Pool("np"));
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  std::optional<ApiResult<Operation>> answer;
  watch_->PollAfter(*op, std::chrono::minutes(1), std::chrono::seconds(1),
                    [&](ApiResult<Operation> r) { answer = std::move(r); });
  ASSERT_TRUE(answer.has_value()) << "answered before PollAfter returned";
  ASSERT_TRUE(answer->ok()) << answer->status().ToString();
  EXPECT_FALSE((*answer)->done());
  EXPECT_EQ(Calls(kGkeGet), 1);
}

TEST_F(OperationWatchTest, ComputeListsOneZoneWhenOnlyItIsBusy) {
  // Inserts finish at once; resizes (zonal operations) run on.
  Start({{"default", 0}, {"compute.instanceGroupManagers.resize", 600'000}});
  auto& compute = cloud_->compute();
  InstanceTemplate t;
  t.name = "tmpl";
  t.machine_type = "n2-standard-2";
  ASSERT_TRUE(compute.InsertInstanceTemplate("proj-c", t).ok());
  std::vector<Operation> resizes;
  for (int i = 0; i < 3; ++i) {
    InstanceGroupManager m;
    m.name = "group-" + std::to_string(i);
    m.zone = "us-central1-a";
    m.instance_template = "projects/proj-c/global/instanceTemplates/tmpl";
    m.target_size = 0;
    ASSERT_TRUE(compute.InsertInstanceGroupManager("proj-c", m).ok());
    auto op = compute.ResizeInstanceGroupManager("proj-c", "us-central1-a", m.name, 1);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    resizes.push_back(*op);
  }
  auto answers = PollAll(resizes);
  for (size_t i = 0; i < resizes.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_EQ(answers[i]->name, resizes[i].name);
    EXPECT_FALSE(answers[i]->done());
  }
  EXPECT_EQ(Calls("GET /compute/v1/projects/{project}/zones/{zone}/operations"), 1);
  EXPECT_EQ(Calls("GET /compute/v1/projects/{project}/aggregated/operations"), 0);
  EXPECT_EQ(Calls("GET /compute/v1/projects/{project}/zones/{zone}/operations/{operation}"), 0);
}

TEST_F(OperationWatchTest, ComputeOperationsTheFilteredListLeavesOutAreReadOneByOne) {
  Start({{"default", 0}});
  auto& compute = cloud_->compute();
  std::vector<Operation> inserts;
  for (int i = 0; i < 3; ++i) {
    InstanceTemplate t;
    t.name = "tmpl-" + std::to_string(i);
    t.machine_type = "n2-standard-2";
    auto op = compute.InsertInstanceTemplate("proj-c", t);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    inserts.push_back(*op);
  }
  // Global operations: the aggregated list, `status != DONE`, has none of
  // them (they are done), so each is read with a GET.
  auto answers = PollAll(inserts);
  for (size_t i = 0; i < inserts.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_EQ(answers[i]->name, inserts[i].name);
    EXPECT_TRUE(answers[i]->done());
  }
  EXPECT_EQ(Calls("GET /compute/v1/projects/{project}/aggregated/operations"), 1);
  EXPECT_EQ(Calls("GET /compute/v1/projects/{project}/global/operations/{operation}"), 3);
  EXPECT_EQ(watch_->counts().gets, 3);
}

TEST_F(OperationWatchTest, ABusyListIsEachPollsErrorARefusedOneFallsBackToGets) {
  Start({{"default", 600'000}});
  ASSERT_TRUE(emulator_->EnsureCluster("proj-f", "us-east5", "c").ok());
  std::vector<Operation> ops;
  for (int i = 0; i < 3; ++i) {
    auto op = cloud_->gke().CreateNodePool({"proj-f", "us-east5", "c"}, Pool("np-" + std::to_string(i)));
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ops.push_back(*op);
  }
  // Every list of operations answers 503 from now on.
  http::HttpRequest faults;
  faults.method = "POST";
  faults.url = emulator_->endpoint() + "/sim/faults";
  faults.headers = {{"Content-Type", "application/json"}};
  faults.body = R"({"seed": 1, "rules": [{"method": "GET", "path": "/locations/-/operations$", "rate503": 1}]})";
  auto set = cloud_->transport().Send(faults);
  ASSERT_TRUE(set.ok() && set->status == 200) << (set.ok() ? set->body : set.status().ToString());
  auto answers = PollAll(ops);
  for (const auto& a : answers) {
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().http_status, 503);
    EXPECT_TRUE(a.error().retryable());
  }
  EXPECT_EQ(Calls(kGkeGet), 0);

  // A list refused for good (403: a quota on lists, a role without
  // operations.list) is no answer about the operations: each is read with a GET.
  faults.body = R"({"seed": 1, "rules": [{"method": "GET", "path": "/locations/-/operations$", "rateQuota": 1}]})";
  set = cloud_->transport().Send(faults);
  ASSERT_TRUE(set.ok() && set->status == 200) << (set.ok() ? set->body : set.status().ToString());
  answers = PollAll(ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_EQ(answers[i]->name, ops[i].name);
  }
  EXPECT_EQ(Calls(kGkeGet), 3);
}

}  // namespace
}  // namespace tpu::cloud
