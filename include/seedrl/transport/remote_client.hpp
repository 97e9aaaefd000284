// RemoteClient: an InferenceClient that reaches a SocketServer over TCP or a Unix-domain socket,
// for actors in another process or on another machine. Same interface as LocalClient, discrete
// and box actions alike (BoxInferenceClient):
//
//   seedrl::RemoteClient client({.address = "learner.lan:8686", .token = secret});
//   seedrl::Actor<seedrl::CartPole, seedrl::RemoteClient> actor(std::move(envs),
//   std::move(client)); actor.run();  // reconnects by itself after a lost connection or a learner
//   restart
//
// What its statuses mean to an Actor:
//   unavailable   no server, a lost connection, or a server that asks to retry (shutting down,
//                 restarting, full): the actor reconnects after a back-off, with a new run id.
//   deadline_exceeded  no answer within step_timeout: the same.
//   closed        the server said training is over (or interrupt() was called): the actor stops.
//   invalid_argument   refused for good (wrong token, other specs, another protocol version),
//                 or step() called with the other kind of actions than the connection's:
//                 retrying cannot help; the message says why.
//
// TCP_NODELAY is set; a STEP is written straight from the actor's buffers (observations and
// declared fields: no copy).
// One client per actor; not shared between threads, except interrupt().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "seedrl/acting/inference_client.hpp"
#include "seedrl/core/action_buffer.hpp"
#include "seedrl/transport/tls_options.hpp"

namespace seedrl {

struct RemoteClientOptions {
  std::string address = "127.0.0.1:8686";  ///< see SocketAddress
  std::string token;                       ///< the server's shared secret
  std::chrono::milliseconds connect_timeout{5'000};
  /// A step unanswered this long counts as a lost connection. Generous: a learner under
  /// back-pressure holds steps back on purpose.
  std::chrono::milliseconds step_timeout{120'000};
  /// TLS to the learner (transport/tls_options.hpp); off while tls.ca is empty. A certificate
  /// that does not verify, or a learner that refuses this actor's, is invalid_argument (the
  /// actor stops: retrying cannot help); a lost connection is unavailable, as without TLS.
  TlsClientOptions tls;

  /// Throws seedrl::Error naming the first bad setting (TLS: the file and what is wrong).
  void validate(std::string_view owner = "RemoteClientOptions") const;
};

class RemoteClient {
 public:
  explicit RemoteClient(RemoteClientOptions options);
  ~RemoteClient();
  RemoteClient(RemoteClient&&) noexcept;
  RemoteClient& operator=(RemoteClient&&) noexcept;

  /// Connects and shakes hands (HELLO, then WELCOME or ERROR). The request's step spec
  /// (observation, actions: N discrete or a box, declared fields) must equal the server's; its
  /// actions decide which step() to call. Throws seedrl::Error for a request the protocol cannot
  /// carry (no environments, an invalid step spec, a box of more than protocol::kMaxActionDims
  /// dimensions).
  Status connect(const ConnectRequest& request);
  /// One lock-step exchange: STEP out, ACTIONS back (one discrete action per environment).
  /// invalid_argument on a connection of box actions.
  Status step(const StepRecord& step, std::span<std::int32_t> actions);
  /// The same for a box of D dimensions: `actions` receives num_envs rows of D values, each
  /// within its dimension's bounds (BoxInferenceClient). invalid_argument on a connection of
  /// discrete actions.
  Status step(const StepRecord& step, std::span<float> actions);
  /// Says GOODBYE and closes. Harmless when not connected.
  void disconnect();
  /// Thread-safe: makes a connect() or step() in progress, and every later one, return closed.
  void interrupt();

  bool connected() const;
  /// The first inference slot the server gave this actor (valid while connected).
  std::int32_t first_slot() const;

 private:
  Status step_actions(const StepRecord& step, ActionBuffer actions);
  Status exchange(const StepRecord& step, std::size_t action_rows,
                  std::span<const std::uint8_t>* answer);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

static_assert(BoxInferenceClient<RemoteClient>);

}  // namespace seedrl
