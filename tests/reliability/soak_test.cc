// Soak (issue 24): `watch` reconciling over and over (a drift check every
// pass) while commits keep coming, against the cloud emulator over loopback;
// the daemon's RSS, threads and open fds are sampled from /proc after each
// commit is applied. After a warm-up, RSS must stay within 5 MB and threads
// and fds must not change: a leak of any of them grows with the count of
// reconciles or commits.
//
// The CI run is short (TPU_SOAK_RECONCILES=40, TPU_SOAK_COMMITS=4 by default);
// bench/soak.sh runs the long one (10,000 reconciles, 500 commits) and keeps
// every sample (TPU_SOAK_REPORT=file, tab-separated).
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/daemon_fixture.h"
#include "daemon/daemon_process.h"

namespace tpu::reliability {
namespace {

using namespace daemon::testing;

struct Sample {
  int commit = 0;
  long reconciles = 0;
  long rss_kb = 0;
  int threads = 0;
  int fds = 0;
};

long EnvOr(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : fallback;
}

// VmRSS (kB) and Threads from /proc/PID/status, and the entries of /proc/PID/fd.
Sample Measure(pid_t pid) {
  Sample s;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kb = std::atol(line.c_str() + 6);
    if (line.rfind("Threads:", 0) == 0) s.threads = std::atoi(line.c_str() + 8);
  }
  if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++s.fds;
    closedir(d);
  }
  return s;
}

// Reconciles that did work, every result summed, from /metrics; -1 when unreachable.
long Reconciles(DaemonProcess& d) {
  auto r = d.Get("/metrics");
  if (!r || r->status != 200) return -1;
  static const std::regex re("tpu_provisioner_reconciles_total\\{[^}]*\\} ([0-9.e+]+)");
  long total = 0;
  for (std::sregex_iterator it(r->body.begin(), r->body.end(), re), end; it != end; ++it)
    total += std::atol((*it)[1].str().c_str());
  return total;
}

TEST(SoakTest, RssThreadsAndFdsStayFlatOverReconcilesAndCommits) {
  const long reconciles = EnvOr("TPU_SOAK_RECONCILES", 40);
  const long commits = std::max(1L, EnvOr("TPU_SOAK_COMMITS", 4));
  TempDir tmp;
  CloudFixture cloud;
  ASSERT_TRUE(cloud.emulator().EnsureCluster(kProject, kZone, "c3").ok());
  FakeMetadataServer metadata;
  const auto repo = tmp.path() / "repo";
  InitRepo(repo);
  for (const char* c : {"c1", "c2", "c3"}) {
    WriteFile(repo / "deploy/tpu-proj" / c / "cluster.yaml", ClusterYaml(c));
    WriteFile(repo / "deploy/tpu-proj" / c / "pools.yaml", PoolYaml("base", 1));
  }
  CommitAll(repo, "three targets");
  DaemonProcess d({"--repo", repo.string(), "--drift-interval", "1ms"}, (tmp.path() / "daemon.log").string(),
                  cloud.emulator().endpoint(), metadata.host());
  ASSERT_NE(d.Port(), 0) << d.Log();

  std::vector<Sample> samples;
  const auto deadline = std::chrono::seconds(60 + reconciles);  // the loop runs about 5 reconciles a second
  for (long c = 1; c <= commits; ++c) {
    // A pool of c1 grows and shrinks by a slice, commit after commit.
    WriteFile(repo / "deploy/tpu-proj/c1/soak.yaml", PoolYaml("soak", 1 + c % 2));
    const std::string head = CommitAll(repo, "soak " + std::to_string(c));
    const long due = reconciles * c / commits;
    ASSERT_TRUE(WaitUntil(
        [&] {
          json t = d.Target("tpu-proj/c1");
          return t.is_object() && t["revision"] == head && t["state"] == "in-sync" &&
                 t["liveChips"] == 4 * (2 + c % 2) && Reconciles(d) >= due;
        },
        deadline))
        << "commit " << c << "\n" << d.Log().substr(0, 4000);
    Sample s = Measure(d.pid());
    s.commit = static_cast<int>(c);
    s.reconciles = Reconciles(d);
    samples.push_back(s);
  }

  if (const char* report = std::getenv("TPU_SOAK_REPORT")) {
    std::ofstream out(report);
    out << "commit\treconciles\trss_kb\tthreads\tfds\n";
    for (const auto& s : samples)
      out << s.commit << '\t' << s.reconciles << '\t' << s.rss_kb << '\t' << s.threads << '\t' << s.fds << '\n';
  }
  // Warm-up: the first quarter of the commits (parse cache, connection pool, allocator arenas).
  const size_t warm = samples.size() / 4;
  long rss_min = samples[warm].rss_kb, rss_max = samples[warm].rss_kb;
  for (size_t i = warm; i < samples.size(); ++i) {
    rss_min = std::min(rss_min, samples[i].rss_kb);
    rss_max = std::max(rss_max, samples[i].rss_kb);
    EXPECT_EQ(samples[i].threads, samples[warm].threads) << "commit " << samples[i].commit;
    EXPECT_EQ(samples[i].fds, samples[warm].fds) << "commit " << samples[i].commit;
  }
  EXPECT_LE(rss_max - rss_min, 5 * 1024) << "RSS after warm-up from " << rss_min << " to " << rss_max << " kB";
  std::printf("soak: %ld reconciles, %ld commits; after warm-up RSS %ld..%ld kB, threads %d, fds %d "
              "(first sample: RSS %ld kB, threads %d, fds %d)\n",
              samples.back().reconciles, commits, rss_min, rss_max, samples.back().threads, samples.back().fds,
              samples.front().rss_kb, samples.front().threads, samples.front().fds);
  d.Signal(SIGTERM);
  EXPECT_TRUE(d.WaitExit().has_value());
}

}  // namespace
}  // namespace tpu::reliability
