// InferenceEndpoint: what an actor's client talks to. The InferenceServer implements it; a
// LocalClient calls it directly, and the socket front end (transport) calls it on behalf of
// remote actors. All members are thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "seedrl/core/status.hpp"
#include "seedrl/core/tensor.hpp"
#include "seedrl/core/tensor_spec.hpp"
#include "seedrl/env/environment.hpp"

namespace seedrl {

struct ConnectRequest {
  std::uint64_t run_id = 0;     ///< fresh random id of this actor run (new after every reconnect)
  std::int32_t num_envs = 1;    ///< environments the actor steps together
  bool evaluation = false;      ///< act greedily and store nothing
  TensorSpec observation_spec;  ///< what the actor's environments produce
  ActionSpec action_spec;
  std::int32_t first_slot =
      -1;  ///< ask for slots [first_slot, first_slot + num_envs); -1: any free range
};

/// A connected actor: its environments occupy slots [first_slot, first_slot + num_envs).
struct Connection {
  std::int32_t first_slot = -1;
  std::int32_t num_envs = 0;
  std::uint64_t run_id = 0;
  bool evaluation = false;
  std::uint64_t id = 0;  ///< assigned by the endpoint; a step must present the slots' owner
  bool connected() const { return first_slot >= 0; }
};

class InferenceEndpoint {
 public:
  virtual ~InferenceEndpoint() = default;

  virtual TensorSpec observation_spec() const = 0;
  virtual ActionSpec action_spec() const = 0;

  /// Reserves slots for an actor. Fails with invalid_argument (wrong specs, too many envs, slots
  /// taken) or closed (the server stopped).
  virtual Status connect(const ConnectRequest& request, Connection* connection) = 0;

  /// One step of all the actor's environments: observations [num_envs, obs...], rewards and
  /// step flags (runtime/unroll.hpp) per environment. Blocks until `actions` (num_envs) are
  /// filled. A run id other than the slot's restarts the slot (fresh recurrent state, partial
  /// unroll dropped).
  virtual Status step(const Connection& connection, std::uint64_t run_id,
                      const Tensor& observations, std::span<const float> rewards,
                      std::span<const std::uint8_t> flags, std::span<std::int32_t> actions) = 0;

  /// Frees the actor's slots; its partial unrolls are dropped.
  virtual void disconnect(const Connection& connection) = 0;
};

}  // namespace seedrl
