// The actor threads of an in-process run (train_locally, train_self_play): one thread per actor,
// each running it until it stops.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/status.hpp"
#include "seedrl/core/thread_name.hpp"

namespace seedrl {

/// Starts a thread per actor of `actors` into `threads`, each running `actor->run()`. An actor
/// that stops on its own with an error (the server refused it, say) or throws ends the run with
/// why, through `session.report_error`. The actors and the session must outlive the threads.
template <class Session, class ActorT>
void start_actor_threads(Session& session, const std::vector<std::unique_ptr<ActorT>>& actors,
                         std::vector<std::thread>& threads) {
  for (std::size_t i = 0; i < actors.size(); ++i) {
    threads.emplace_back([&session, a = actors[i].get(), i] {
      set_thread_name("seedrl-actor");
      try {
        if (const Status status = a->run(); !status.is_ok())
          throw Error(str_cat("actor ", i, " stopped: ", status.to_string()));
      } catch (...) {
        session.report_error(std::current_exception());
      }
    });
  }
}

}  // namespace seedrl
