// ConnectionCloud: see cloud_port.h.
#include "daemon/cloud_port.h"

namespace tpu::daemon {

Result<cloud::LiveState> ConnectionCloud::Refresh(const std::vector<std::string>& projects) {
  cloud::RefreshOptions options;
  options.include_operations = true;
  options.include_reservations = reservations_.any;
  options.named_reservations = reservations_.foreign;
  return connection_->Refresh(projects, options);
}

void ConnectionCloud::NameReservations(plan::NamedReservations named) { reservations_ = std::move(named); }

apply::ApplyReport ConnectionCloud::Apply(const plan::Plan& plan,
                                          std::vector<cloud::Operation> running_operations) {
  apply::ExecuteOptions options = options_;
  options.running_operations = std::move(running_operations);
  apply::Executor executor(
      apply::Clients{&connection_->gke(), &connection_->compute(), &connection_->poller(), &connection_->watch()}, options);
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Checked under the lock so a CancelApply() racing with this call either
    // sees the executor or makes us return before starting it.
    if (cancelled_) return apply::ApplyReport{};
    current_ = &executor;
  }
  apply::ApplyReport report = executor.Run(plan);
  std::lock_guard<std::mutex> lock(mu_);
  current_ = nullptr;
  return report;
}

void ConnectionCloud::CancelApply() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (current_) current_->Cancel();
}

int ConnectionCloud::OperationsInFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!current_) return 0;
  int n = 0;
  for (const auto& t : current_->Snapshot())
    if (t.state == apply::TaskResult::State::kRunning) ++n;
  return n;
}

}  // namespace tpu::daemon
