// A test's Env: time moves only when told (and when code sleeps, by exactly
// the time it asked for), variables come from a map, and files set here shadow
// the disk (a path not set is read from the disk, so tests may still use real
// temporary files). Thread-safe, so threads of the code under test may read it.
#pragma once

#include <map>
#include <mutex>

#include "base/env.h"

namespace tpu {

class FakeEnv : public Env {
 public:
  FakeEnv() = default;
  // The environment variables it holds: FakeEnv({{"HOME", "/home/me"}}).
  FakeEnv(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}

  SteadyTime Now() const override {
    std::lock_guard<std::mutex> l(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> l(mu_);
    return wall_;
  }
  void SleepFor(std::chrono::steady_clock::duration d) override {
    std::lock_guard<std::mutex> l(mu_);
    slept_ += d;
    MoveLocked(d);
  }
  Result<std::string> ReadFile(const std::string& path) const override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (auto it = files_.find(path); it != files_.end()) return it->second;
    }
    return Env::Default().ReadFile(path);
  }
  std::optional<std::string> Var(const std::string& name) const override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }

  // Both clocks move on by d.
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard<std::mutex> l(mu_);
    MoveLocked(d);
  }
  void SetWall(WallTime t) {
    std::lock_guard<std::mutex> l(mu_);
    wall_ = t;
  }
  void SetFile(const std::string& path, std::string content) {
    std::lock_guard<std::mutex> l(mu_);
    files_[path] = std::move(content);
  }
  void SetVar(const std::string& name, std::string value) {
    std::lock_guard<std::mutex> l(mu_);
    vars_[name] = std::move(value);
  }
  // The time SleepFor() was asked for, in all.
  std::chrono::steady_clock::duration slept() const {
    std::lock_guard<std::mutex> l(mu_);
    return slept_;
  }

 private:
  void MoveLocked(std::chrono::steady_clock::duration d) {
    now_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  }

  mutable std::mutex mu_;
  SteadyTime now_ = SteadyTime{} + std::chrono::hours(1);
  WallTime wall_ = WallTime{} + std::chrono::hours(24 * 365 * 56);
  std::chrono::steady_clock::duration slept_{};
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> vars_;
};

}  // namespace tpu
