// A queue policy with an option of its own, written the way a new policy is: its option (`vip`,
// the user whose tasks go first), the option's check and its default live with the policy; the
// test registers it with one line. Header-only because the test build compiles test_*.cpp (a
// built-in policy is a .hpp/.cpp pair under schedulers/queue/).
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"

namespace chorus::test {

// FIFO, except that the VIP user's tasks go before everyone else's.
class VipFirstQueue final : public QueuePolicy {
 public:
  static constexpr const char* kDefaultVip = "root";

  explicit VipFirstQueue(std::string vip) : vip_(std::move(vip)) {}

  static std::vector<OptionSpec> option_specs() { return {{"vip", OptionKind::text}}; }
  static Result<std::unique_ptr<QueuePolicy>> from_args(PolicyArgs& args) {
    std::string vip = args.text("vip").value_or(kDefaultVip);
    if (vip.empty()) {
      args.fail(args.find("vip")->value.at, "'vip' of " + args.policy() + " must name a user");
      return invalid_argument("no vip");  // ignored: the registry reports the failure above
    }
    return std::unique_ptr<QueuePolicy>(std::make_unique<VipFirstQueue>(std::move(vip)));
  }

  const std::string& vip() const { return vip_; }

  std::string_view name() const override { return "vip-first"; }
  void on_ready(const TaskSpec& task, TimePoint) override {
    (task.user == vip_ ? vips_ : others_).push_back(task.id);
  }
  std::optional<TaskId> next(const ClusterView&) override {
    if (!vips_.empty()) return vips_.front();
    if (!others_.empty()) return others_.front();
    return std::nullopt;
  }
  void on_start(const TaskSpec& task, TimePoint) override { remove(task.id); }
  void remove(TaskId task) override {
    for (auto* q : {&vips_, &others_}) q->erase(std::remove(q->begin(), q->end(), task), q->end());
  }
  std::size_t size() const override { return vips_.size() + others_.size(); }

 private:
  std::string vip_;
  std::deque<TaskId> vips_, others_;
};

// A placement policy with an option of its own (`model`: a file), as the network-aware placement
// takes one: first fit, remembering the model it was given.
class ModelPlacement final : public PlacementPolicy {
 public:
  explicit ModelPlacement(std::string model) : model_(std::move(model)) {}

  static std::vector<OptionSpec> option_specs() { return {{"model", OptionKind::text}}; }
  static Result<std::unique_ptr<PlacementPolicy>> from_args(PolicyArgs& args) {
    return std::unique_ptr<PlacementPolicy>(
        std::make_unique<ModelPlacement>(args.text("model").value_or("")));
  }

  const std::string& model() const { return model_; }

  std::string_view name() const override { return "with-model"; }
  Fit filter(const TaskSpec& task, const NodeView& node) const override {
    return fit_by_resources(task, node);
  }
  double score(const TaskSpec&, const NodeView&) const override { return 0; }

 private:
  std::string model_;
};

}  // namespace chorus::test
