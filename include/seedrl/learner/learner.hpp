// Learner<Agent, Backend>: trains an agent's network on what inference produced. Each agent's
// header provides its specialisation (VTraceAgent: agents/vtrace/learner.hpp, R2D2Agent:
// agents/r2d2/learner.hpp), built on LearnerCore (learner/learner_core.hpp), which owns what
// every learner shares; the specialisation is the agent's loss and data path.
//
// What the training runtime (TrainingSession) needs of a learner, checked by LearnerOf:
//
//   Learner(const Agent&, const UnrollSpec&, UnrollQueue&)   unrolls arrive on the queue
//   std::optional<LearnerStepStats> step()   trains once; blocks for data; nothing once the queue
//                                            is closed and drained
//   SharedParameters& parameters()           what inference reads
//   std::int64_t steps() const               updates applied (any thread)
//   std::vector<MetricInfo> metric_schema() const   the names step() reports, in order
//   void save_checkpoint(path, counters, metadata, generations)   keeps `generations` files
//   io::CheckpointCounters load_checkpoint(path)   restores everything, or throws changing nothing
//
// Optional: `std::vector<Metric> gauges() const` (thread-safe), values read at every report
// (R2D2: the replay's size).
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedrl/experience/unroll.hpp"
#include "seedrl/io/checkpoint.hpp"
#include "seedrl/learner/learner_metrics.hpp"
#include "seedrl/learner/skipped_steps.hpp"
#include "seedrl/nn/backend.hpp"
#include "seedrl/shared/shared_parameters.hpp"

namespace seedrl {

template <class Agent, nn::Backend B>
class Learner;

/// What one learner step did.
struct LearnerStepStats {
  std::int64_t step = 0;  ///< updates applied after this step (the published parameter version)
  bool skipped = false;   ///< no update: the loss, a priority or the gradient was not finite
  /// When skipped: the stretch of consecutive skipped steps this one belongs to (how many, since
  /// which learner step, and what was not finite at its first step).
  SkipStretch skip;
  MetricList metrics;  ///< the learner's named values (its metric_schema())
};

template <class L, class A>
concept LearnerOf = std::constructible_from<L, const A&, const UnrollSpec&, UnrollQueue&> &&
    requires(L& learner, const L& const_learner, const std::string& path,
             const io::CheckpointCounters& counters) {
  { learner.step() } -> std::same_as<std::optional<LearnerStepStats>>;
  { learner.parameters() } -> std::same_as<SharedParameters&>;
  { const_learner.steps() } -> std::convertible_to<std::int64_t>;
  { const_learner.metric_schema() } -> std::same_as<std::vector<MetricInfo>>;
  learner.save_checkpoint(path, counters, io::Metadata{}, 1);
  { learner.load_checkpoint(path) } -> std::same_as<io::CheckpointCounters>;
};

}  // namespace seedrl
