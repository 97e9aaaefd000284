// The C ABI's actor (include/seedrl/capi/seedrl.h): a RemoteClient behind an opaque handle. Every
// entry point catches what the C++ side throws and turns it into a status and a message
// (seedrl_last_error); nothing unwinds into the caller.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_common.hpp"
#include "seedrl/capi/seedrl.h"
#include "seedrl/core/step_record.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/transport/protocol.hpp"
#include "seedrl/transport/remote_client.hpp"
#include "seedrl/transport/token.hpp"

struct seedrl_actor {
  seedrl::RemoteClientOptions options;
  std::int32_t num_envs = 1;
  bool evaluation = false;
  std::optional<seedrl::TensorSpec> observation;
  std::optional<seedrl::ActionSpec> actions;
  std::vector<seedrl::StepFieldSpec> fields;
  std::optional<seedrl::RemoteClient> client;
  std::vector<seedrl::Tensor> field_views;  // the caller's field buffers, per step
};

namespace {

using seedrl::capi::fail;
using seedrl::capi::guard;

seedrl::StepSpec spec_of(const seedrl_actor& a) {
  if (!a.observation) seedrl::fail("seedrl_actor_observation was not called");
  if (!a.actions)
    seedrl::fail("no actions were declared (seedrl_actor_discrete_actions, ",
                 "_branched_actions or _box_actions)");
  seedrl::StepSpec spec{*a.observation, *a.actions, a.fields};
  spec.validate("the actor's step spec");
  return spec;
}

seedrl_status connect_once(seedrl_actor& a) {
  std::random_device device;
  const std::uint64_t run_id = (std::uint64_t{device()} << 32) ^ device();
  const seedrl::Status s = a.client->connect(
      {.run_id = run_id, .num_envs = a.num_envs, .evaluation = a.evaluation, .spec = spec_of(a)});
  return seedrl::capi::status_of(s);
}

template <class Action>
seedrl_status step(seedrl_actor* a, const float* rewards, const std::uint8_t* flags,
                   const void* observations, const void* const* fields, Action* actions) {
  return guard([&] {
    if (a == nullptr || rewards == nullptr || flags == nullptr || observations == nullptr ||
        actions == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_step: a NULL argument");
    if (!a->client || !a->client->connected())
      return fail(SEEDRL_UNAVAILABLE, "seedrl_actor_step: not connected (seedrl_actor_connect)");
    if (!a->fields.empty() && fields == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_step: ", a->fields.size(),
                  " declared fields and no field buffers");
    const auto n = static_cast<std::size_t>(a->num_envs);
    const seedrl::Shape observation_shape = a->observation->shape.prepend({a->num_envs});
    seedrl::StepRecord record;
    record.observations = seedrl::Tensor::from_blob(const_cast<void*>(observations),
                                                    observation_shape, a->observation->dtype);
    record.rewards = {rewards, n};
    record.flags = {flags, n};
    a->field_views.clear();
    for (std::size_t k = 0; k < a->fields.size(); ++k) {
      if (fields[k] == nullptr)
        return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_step: field ", a->fields[k].name,
                    "'s buffer is NULL");
      a->field_views.push_back(seedrl::Tensor::from_blob(
          const_cast<void*>(fields[k]), a->fields[k].spec.shape.prepend({a->num_envs}),
          a->fields[k].spec.dtype));
    }
    record.fields = a->field_views;
    const std::size_t width = static_cast<std::size_t>(seedrl_actor_action_width(a));
    return seedrl::capi::status_of(a->client->step(record, std::span<Action>(actions, n * width)));
  });
}

}  // namespace

extern "C" {

void seedrl_actor_options_init(seedrl_actor_options* o) {
  if (o == nullptr) return;
  *o = seedrl_actor_options{};
  o->num_envs = 1;
}

seedrl_status seedrl_actor_create(const seedrl_actor_options* o, seedrl_actor** out) {
  if (out != nullptr) *out = nullptr;
  return guard([&] {
    if (o == nullptr || out == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_create: a NULL argument");
    if (o->num_envs < 1 || o->num_envs > static_cast<std::int32_t>(seedrl::protocol::kMaxEnvs))
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_options.num_envs must be in [1, ",
                  seedrl::protocol::kMaxEnvs, "], got ", o->num_envs);
    if (o->token != nullptr && o->token_file != nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT,
                  "seedrl_actor_options: give token or token_file, not both");
    auto a = std::make_unique<seedrl_actor>();
    a->options.address = o->address != nullptr ? o->address : "127.0.0.1:8686";
    if (o->token != nullptr) a->options.token = o->token;
    if (o->token_file != nullptr) a->options.token = seedrl::read_token_file(o->token_file);
    if (o->connect_timeout_ms > 0)
      a->options.connect_timeout = std::chrono::milliseconds(o->connect_timeout_ms);
    if (o->step_timeout_ms > 0)
      a->options.step_timeout = std::chrono::milliseconds(o->step_timeout_ms);
    if (o->tls_ca != nullptr) a->options.tls.ca = o->tls_ca;
    if (o->tls_cert != nullptr) a->options.tls.certificate = o->tls_cert;
    if (o->tls_key != nullptr) a->options.tls.private_key = o->tls_key;
    if (o->tls_server_name != nullptr) a->options.tls.server_name = o->tls_server_name;
    a->options.validate("seedrl_actor_options");
    a->num_envs = o->num_envs;
    a->evaluation = o->evaluation != 0;
    a->client.emplace(a->options);
    *out = a.release();
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_observation(seedrl_actor* a, int32_t dtype, int32_t rank,
                                       const int64_t* dims) {
  return guard([&] {
    if (a == nullptr) return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_observation: NULL actor");
    a->observation = seedrl::capi::tensor_spec("the observation", dtype, rank, dims, 6);
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_discrete_actions(seedrl_actor* a, int32_t num_actions) {
  return guard([&] {
    if (a == nullptr) return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_discrete_actions: NULL");
    if (num_actions < 1)
      return fail(SEEDRL_INVALID_ARGUMENT, "num_actions must be >= 1, got ", num_actions);
    a->actions = seedrl::ActionSpec::discrete(num_actions);
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_branched_actions(seedrl_actor* a, int32_t branches,
                                            const int32_t* sizes) {
  return guard([&] {
    if (a == nullptr || sizes == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_branched_actions: a NULL argument");
    if (branches < 2 || branches > 64)
      return fail(SEEDRL_INVALID_ARGUMENT, "branches must be in [2, 64], got ", branches);
    a->actions = seedrl::ActionSpec::branched(std::vector<std::int32_t>(sizes, sizes + branches));
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_box_actions(seedrl_actor* a, int32_t dims, const float* low,
                                       const float* high) {
  return guard([&] {
    if (a == nullptr || low == nullptr || high == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_box_actions: a NULL argument");
    if (dims < 1 || dims > static_cast<std::int32_t>(seedrl::protocol::kMaxActionDims))
      return fail(SEEDRL_INVALID_ARGUMENT, "a box has 1 to ", seedrl::protocol::kMaxActionDims,
                  " dimensions, got ", dims);
    for (std::int32_t d = 0; d < dims; ++d)
      if (!(std::isfinite(low[d]) && std::isfinite(high[d]) && low[d] < high[d]))
        return fail(SEEDRL_INVALID_ARGUMENT, "box dimension ", d,
                    ": the bounds must be finite with low < high, got [", low[d], ", ", high[d],
                    "]");
    a->actions = seedrl::ActionSpec::box(std::vector<float>(low, low + dims),
                                         std::vector<float>(high, high + dims));
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_add_field(seedrl_actor* a, const char* name, int32_t dtype, int32_t rank,
                                     const int64_t* dims) {
  return guard([&] {
    if (a == nullptr || name == nullptr)
      return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_add_field: a NULL argument");
    a->fields.push_back({name, seedrl::capi::tensor_spec(name, dtype, rank, dims, 4)});
    return SEEDRL_OK;
  });
}

seedrl_status seedrl_actor_connect(seedrl_actor* a, int64_t patience_ms) {
  return guard([&] {
    if (a == nullptr) return fail(SEEDRL_INVALID_ARGUMENT, "seedrl_actor_connect: NULL actor");
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(std::max<std::int64_t>(patience_ms, 0));
    auto delay = std::chrono::milliseconds(100);
    for (;;) {
      const seedrl_status s = connect_once(*a);
      if (s != SEEDRL_UNAVAILABLE && s != SEEDRL_DEADLINE_EXCEEDED) return s;
      if (patience_ms == 0 ||
          (patience_ms > 0 && std::chrono::steady_clock::now() + delay > deadline))
        return s;
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, std::chrono::milliseconds(5'000));
    }
  });
}

seedrl_status seedrl_actor_step(seedrl_actor* a, const float* rewards, const uint8_t* flags,
                                const void* observations, const void* const* fields,
                                int32_t* actions) {
  return step(a, rewards, flags, observations, fields, actions);
}

seedrl_status seedrl_actor_step_box(seedrl_actor* a, const float* rewards, const uint8_t* flags,
                                    const void* observations, const void* const* fields,
                                    float* actions) {
  return step(a, rewards, flags, observations, fields, actions);
}

int32_t seedrl_actor_action_width(const seedrl_actor* a) {
  if (a == nullptr || !a->actions) return 0;
  if (a->actions->is_box()) return static_cast<int32_t>(a->actions->dims());
  return a->actions->is_branched() ? static_cast<int32_t>(a->actions->branch_count()) : 1;
}

void seedrl_actor_interrupt(seedrl_actor* a) {
  if (a != nullptr && a->client) a->client->interrupt();
}

void seedrl_actor_destroy(seedrl_actor* a) {
  if (a == nullptr) return;
  try {
    if (a->client) a->client->disconnect();
  } catch (...) {  // nothing crosses the boundary; the connection goes with the handle
  }
  delete a;
}

}  // extern "C"
