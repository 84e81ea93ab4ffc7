// Soak (issue 24): `watch` reconciling over and over (a drift check every
// pass) while commits keep coming, against the cloud emulator over loopback;
// the daemon's RSS, threads and open fds are sampled from /proc after each
// commit is applied. After a warm-up, RSS must stay within 5 MB, and threads
// and fds must not grow (sockets, the connection cache, within a few; other
// fds within one a pass may have open): a leak of any of them grows with
// reconciles or commits.
//
// The CI run is short (TPU_SOAK_RECONCILES=40, TPU_SOAK_COMMITS=4 by default);
// bench/soak.sh runs the long one (10,000 reconciles, 500 commits) and keeps
// every sample (TPU_SOAK_REPORT=file, tab-separated).
#include <dirent.h>
#include <unistd.h>

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
  int sockets = 0;  // of fds: the cloud client's cached connections, listeners, …
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
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ++s.fds;
      char target[256] = {0};
      if (readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1) > 0 &&
          std::string(target).rfind("socket:", 0) == 0)
        ++s.sockets;
    }
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

// Warm-up: the first quarter of the commits (parse cache, connection cache, allocator arenas).
// Nothing may grow after it.
void ExpectFlatAfterWarmUp(const std::vector<Sample>& samples, long commits) {
  // Sockets are the cloud client's connection cache, which
  // opens and drops connections as a pass's concurrency varies: no more than
  // kSocketSlack above the warm-up's peak. Other fds (the repository, inotify,
  // pipes) no more than one above it: the loop never idles here (a drift check
  // every pass), so a sample can catch a pass with an object file open.
  // Threads may not exceed the warm-up's peak: an idle daemon has 4, and a
  // fifth, an endpoint worker serving this test's own polling, comes and goes.
  constexpr int kSocketSlack = 4;
  constexpr int kFileSlack = 1;
  const size_t warm = samples.size() / 4;
  int warm_sockets = 0, warm_threads = 0, warm_files = 0;
  for (size_t i = 0; i <= warm; ++i) {
    warm_sockets = std::max(warm_sockets, samples[i].sockets);
    warm_threads = std::max(warm_threads, samples[i].threads);
    warm_files = std::max(warm_files, samples[i].fds - samples[i].sockets);
  }
  long rss_min = samples[warm].rss_kb, rss_max = samples[warm].rss_kb;
  int sockets_max = 0;
  for (size_t i = warm; i < samples.size(); ++i) {
    rss_min = std::min(rss_min, samples[i].rss_kb);
    rss_max = std::max(rss_max, samples[i].rss_kb);
    sockets_max = std::max(sockets_max, samples[i].sockets);
    EXPECT_LE(samples[i].threads, warm_threads) << "commit " << samples[i].commit;
    EXPECT_LE(samples[i].fds - samples[i].sockets, warm_files + kFileSlack) << "commit " << samples[i].commit;
    EXPECT_LE(samples[i].sockets, warm_sockets + kSocketSlack) << "commit " << samples[i].commit;
  }
  EXPECT_LE(rss_max - rss_min, 5 * 1024) << "RSS after warm-up from " << rss_min << " to " << rss_max << " kB";
  std::printf("soak: %ld reconciles, %ld commits; after warm-up RSS %ld..%ld kB, threads %d, fds %d of which "
              "sockets up to %d (first sample: RSS %ld kB, threads %d, fds %d)\n",
              samples.back().reconciles, commits, rss_min, rss_max, samples.back().threads, samples.back().fds,
              sockets_max, samples.front().rss_kb, samples.front().threads, samples.front().fds);
}

TEST(SoakTest, RssThreadsAndFdsStayFlatOverReconcilesAndCommits) {
  const long reconciles = EnvOr("TPU_SOAK_RECONCILES", 40);
  const long commits = std::max(1L, EnvOr("TPU_SOAK_COMMITS", 4));
  TempDir tmp;
  CloudFixture cloud;
  ASSERT_TRUE(cloud.emulator().EnsureCluster(kProject, kZone, "c3").ok());
  test_support::MetadataServer metadata;
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
  // Written as it goes, so a long run cut short still leaves its samples.
  std::ofstream report;
  if (const char* path = std::getenv("TPU_SOAK_REPORT")) {
    report.open(path);
    report << "commit\treconciles\trss_kb\tthreads\tfds\tsockets" << std::endl;
  }
  const auto deadline = std::chrono::seconds(60 + reconciles);  // the loop runs about 2 reconciles a second
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
    if (report.is_open())
      report << s.commit << '\t' << s.reconciles << '\t' << s.rss_kb << '\t' << s.threads << '\t' << s.fds << '\t'
             << s.sockets << std::endl;
  }

  ExpectFlatAfterWarmUp(samples, commits);
  d.Signal(SIGTERM);
  EXPECT_TRUE(d.WaitExit().has_value());
}

}  // namespace
}  // namespace tpu::reliability
