// The join keys on an instance's metadata: Compute's fingerprint rule. A
// writer that lands between our read and our write makes our setMetadata a
// 412; we read again and write again, and nothing the other writer set is lost.
#include "nodes/instance_keys.h"

#include <gtest/gtest.h>

#include <thread>

#include "cloud/emulator_fixture.h"

namespace tpu::nodes {
namespace {

constexpr const char* kProject = "proj-c";
constexpr const char* kZone = "us-central1-a";

class InstanceKeysTest : public cloud::testing::EmulatorTest {
 protected:
  cloud::ComputeClient& compute() { return cloud_->compute(); }

  std::string MakeVm() {
    cloud::InstanceTemplate t;
    t.name = "keys-tmpl";
    t.machine_type = "tpu7x-standard-4t";
    auto top = compute().InsertInstanceTemplate(kProject, t);
    EXPECT_TRUE(top.ok()) << top.status().ToString();
    if (top.ok()) AwaitDone(*top);
    cloud::InstanceGroupManager m;
    m.name = "keys";
    m.zone = kZone;
    m.instance_template = "projects/proj-c/global/instanceTemplates/keys-tmpl";
    m.target_size = 1;
    auto mop = compute().InsertInstanceGroupManager(kProject, m);
    EXPECT_TRUE(mop.ok()) << mop.status().ToString();
    if (mop.ok()) AwaitDone(*mop);
    auto vms = compute().ListManagedInstances(kProject, kZone, "keys");
    return vms.ok() && !vms->empty() ? (*vms)[0].name : "";
  }

  int64_t SetMetadataCalls() {
    int64_t n = 0;
    for (const auto& [route, count] : emulator_->counters().calls_by_route)
      if (route.find("setMetadata") != std::string::npos) n += count;
    return n;
  }

  std::map<std::string, std::string> Metadata(const std::string& vm) {
    auto instance = compute().GetInstance(kProject, kZone, vm);
    EXPECT_TRUE(instance.ok()) << instance.status().ToString();
    return instance.ok() ? std::map<std::string, std::string>(instance->metadata.begin(), instance->metadata.end())
                         : std::map<std::string, std::string>{};
  }
};

TEST_F(InstanceKeysTest, AConcurrentWriterCostsARetryAndNothingIsLost) {
  const std::string vm = MakeVm();
  ASSERT_FALSE(vm.empty());
  // Our writes (they carry a join key) are held 400 ms after they arrive, so
  // another writer can land between our read and our write.
  sim::FaultRule slow;
  slow.method = "POST";
  slow.path = "setMetadata";
  slow.body = "kubeadm-join-token";
  slow.rate_slow = 1.0;
  slow.slow_ms = 400;
  ASSERT_TRUE(emulator_->SetFaults({1, {slow}}).ok());

  Result<bool> ours = Status::Internal("not run");
  std::thread joiner([&] {
    ours = UpdateInstanceMetadata(compute(), {kProject, kZone, vm}, {{kJoinTokenKey, "abcdef.0123456789abcdef"}}, {});
  });
  // Once our write is in flight, someone else writes the instance's metadata.
  for (int i = 0; i < 2000 && SetMetadataCalls() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(SetMetadataCalls(), 1);
  auto now = compute().GetInstance(kProject, kZone, vm);
  ASSERT_TRUE(now.ok());
  auto items = now->metadata;
  items.emplace_back("owner-note", "set by a person");
  ASSERT_TRUE(compute().SetInstanceMetadata(kProject, kZone, vm, now->metadata_fingerprint, items).ok());
  joiner.join();

  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_TRUE(*ours);
  EXPECT_EQ(SetMetadataCalls(), 3) << "ours, theirs, ours again after the 412";
  auto md = Metadata(vm);
  EXPECT_EQ(md["owner-note"], "set by a person");
  EXPECT_EQ(md[kJoinTokenKey], "abcdef.0123456789abcdef");
}

TEST_F(InstanceKeysTest, RemovingKeysThatAreNotThereWritesNothing) {
  const std::string vm = MakeVm();
  ASSERT_FALSE(vm.empty());
  auto r = UpdateInstanceMetadata(compute(), {kProject, kZone, vm}, {}, {kJoinTokenKey, kCaHashKey});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(*r);
  EXPECT_EQ(SetMetadataCalls(), 0);
}

}  // namespace
}  // namespace tpu::nodes
