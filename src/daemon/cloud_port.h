// CloudPort: the two things the reconcile loop asks of the cloud — list live
// state, and execute a plan — behind one interface, so loop tests can inject
// failures per project without an HTTP server. ConnectionCloud is the real
// one: a cloud::CloudConnection and a fresh apply::Executor per apply.
//
// Refresh and Apply are called from the loop's thread only; CancelApply and
// OperationsInFlight from any thread (shutdown, /metrics).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "cloud/cloud.h"
#include "cloud/types.h"
#include "plan/model.h"
#include "plan/reservations.h"

namespace tpu::daemon {

class CloudPort {
 public:
  virtual ~CloudPort() = default;
  // Live state of `projects`, running operations included (the executor
  // waits for operations an interrupted run left behind).
  virtual Result<cloud::LiveState> Refresh(const std::vector<std::string>& projects) = 0;
  // Runs every executable action of `plan`; returns early after CancelApply().
  virtual apply::ApplyReport Apply(const plan::Plan& plan,
                                   std::vector<cloud::Operation> running_operations) = 0;
  // Stops the current apply (operations already started are left to the
  // next run) and every later one. Idempotent.
  virtual void CancelApply() = 0;
  // Tasks of the current apply that are started and unfinished.
  virtual int OperationsInFlight() const = 0;
  // The reservations the manifests name, which later refreshes read too
  // (plan/reservations.h); a port that lists none ignores it.
  virtual void NameReservations(plan::NamedReservations /*named*/) {}
};

class ConnectionCloud : public CloudPort {
 public:
  // `connection` must outlive this object.
  ConnectionCloud(cloud::CloudConnection* connection, apply::ExecuteOptions options)
      : connection_(connection), options_(std::move(options)) {}

  Result<cloud::LiveState> Refresh(const std::vector<std::string>& projects) override;
  apply::ApplyReport Apply(const plan::Plan& plan,
                           std::vector<cloud::Operation> running_operations) override;
  void CancelApply() override;
  int OperationsInFlight() const override;
  void NameReservations(plan::NamedReservations named) override;

 private:
  cloud::CloudConnection* connection_;
  apply::ExecuteOptions options_;
  mutable std::mutex mu_;
  apply::Executor* current_ = nullptr;  // guarded by mu_; set while Apply runs
  std::atomic<bool> cancelled_{false};
  plan::NamedReservations reservations_;  // loop thread only, as Refresh
};

}  // namespace tpu::daemon
