// KubeKueue: see kueue_port.h.
#include "daemon/kueue_port.h"

namespace tpu::daemon {

std::string KueueConfigKey(const kueue::KueueConfig& c) {
  return c.cluster_queue + "|" + c.cohort + "|" + c.resource + "|" + c.flavor_name + "|" +
         std::to_string(static_cast<int>(c.mode)) + "|" + std::to_string(static_cast<int>(c.hold)) + "|" +
         std::to_string(c.scale_down_timeout.count()) + "|" + c.api_version + "|" + c.event_namespace;
}

void KubeKueue::Use(const kueue::KueueConfig& config) {
  std::string key = KueueConfigKey(config);
  if (sync_ && key == config_key_) return;
  config_key_ = key;
  gate_.reset();
  flex_.reset();
  events_ = std::make_unique<kube::EventRecorder>(client_, clock_, config.event_namespace);
  sync_ = std::make_unique<kueue::QuotaSync>(client_, config);
  gate_ = std::make_unique<kueue::ScaleDownGate>(client_, *sync_, *events_, clock_);
  if (workloads_) gate_->SetWorkloadSource(workloads_);
  flex_ = std::make_unique<kueue::FlexStartSync>(client_, *sync_);
}

Result<kueue::QuotaReport> KubeKueue::Sync(const manifest::Target& target, const kueue::KueueConfig& config,
                                          const std::set<std::string>& excluded) {
  Use(config);
  return sync_->Sync(target, excluded);
}

Result<kueue::ScaleDownVerdict> KubeKueue::CheckScaleDown(const manifest::Target& desired,
                                                         const kueue::KueueConfig& config,
                                                         const std::vector<kueue::PoolRemoval>& removals) {
  Use(config);
  return gate_->Check(desired, removals);
}

}  // namespace tpu::daemon

namespace tpu::daemon {

Result<kueue::FlexStartReport> KubeKueue::SyncFlexStart(const manifest::Target& target,
                                                       const kueue::KueueConfig& config) {
  Use(config);
  return flex_->Sync(target);
}

}  // namespace tpu::daemon
