// The C ABI's policy (include/seedrl/capi/seedrl.h): a checkpoint loaded as a seedrl::Policy on
// the CPU, acting on the caller's buffers.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "capi/capi_common.hpp"
#include "seedrl/capi/seedrl.h"
#include "seedrl/policy/policy.hpp"

struct seedrl_policy {
  explicit seedrl_policy(const std::string& path) : policy(path) {}
  seedrl::Policy<> policy;
  std::vector<seedrl::Tensor> fields;  // the mask view, per call
};

namespace {

using seedrl::capi::fail;
using seedrl::capi::guard;

// The observations (f32, batch rows) and the mask as the policy's input.
seedrl::PolicyInput input_of(seedrl_policy& p, std::int32_t batch, const float* observations,
                             const std::uint8_t* mask) {
  const seedrl::nn::NetworkOptions& network = p.policy.description().network;
  const seedrl::Tensor obs =
      seedrl::Tensor::from_blob(const_cast<float*>(observations),
                                network.observation_shape.prepend({batch}), seedrl::DType::f32);
  p.fields.clear();
  const auto& declared = p.policy.step_fields();
  for (const seedrl::StepFieldSpec& f : declared) {
    SEEDRL_REQUIRE(f.name == seedrl::kActionMaskField, "the checkpoint's policy takes a field '",
                   f.name, "' the C ABI cannot give it (only a legal-action mask)");
    SEEDRL_REQUIRE(mask != nullptr, "the checkpoint's policy takes a legal-action mask: pass one");
    p.fields.push_back(seedrl::Tensor::from_blob(const_cast<std::uint8_t*>(mask),
                                                 f.spec.shape.prepend({batch}), f.spec.dtype));
  }
  return seedrl::PolicyInput(obs, p.fields);
}

}  // namespace

extern "C" {

seedrl_status seedrl_policy_load(const char* path, seedrl_policy** out) {
  if (out != nullptr) *out = nullptr;
  return guard([&] {
    if (path == nullptr || out == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_policy_load: a NULL argument");
    if (!std::filesystem::exists(path))
      return fail(SEEDRL_NOT_FOUND, "seedrl_policy_load: ", path, ": no such file or directory");
    *out = new seedrl_policy(path);
    return SEEDRL_OK;
  });
}

int64_t seedrl_policy_observation_size(const seedrl_policy* p) {
  return p == nullptr ? 0 : p->policy.description().network.observation_shape.numel();
}

int32_t seedrl_policy_action_width(const seedrl_policy* p) {
  if (p == nullptr) return 0;
  const seedrl::ActionSpec& a = p->policy.action_spec();
  if (a.is_box()) return a.dims();
  return a.is_branched() ? a.branch_count() : 1;
}

seedrl_status seedrl_policy_act(seedrl_policy* p, int32_t batch, const float* observations,
                                const uint8_t* mask, int32_t* actions) {
  return guard([&] {
    if (p == nullptr || observations == nullptr || actions == nullptr || batch < 1)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_policy_act: a NULL argument or a batch < 1");
    const auto n =
        static_cast<std::size_t>(batch) * static_cast<std::size_t>(seedrl_policy_action_width(p));
    p->policy.act(input_of(*p, batch, observations, mask), std::span<std::int32_t>(actions, n));
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_policy_act_box(seedrl_policy* p, int32_t batch, const float* observations,
                                    float* actions) {
  return guard([&] {
    if (p == nullptr || observations == nullptr || actions == nullptr || batch < 1)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_policy_act_box: a NULL argument or a batch < 1");
    const auto n =
        static_cast<std::size_t>(batch) * static_cast<std::size_t>(seedrl_policy_action_width(p));
    p->policy.act(input_of(*p, batch, observations, nullptr), std::span<float>(actions, n));
    return SEEDRL_OK;
  });
}

void seedrl_policy_reset(seedrl_policy* p) {
  if (p != nullptr) p->policy.reset();
}

void seedrl_policy_destroy(seedrl_policy* p) {
  delete p;
}

}  // extern "C"
