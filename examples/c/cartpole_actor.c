/* cartpole_actor: an actor written in C against seedrl's C ABI (include/seedrl/capi/seedrl.h):
 * CartPole-v1, stepped for `distributed_learner --env cartpole`, until the learner says training
 * is over. It shows what an environment in another language does: declare the step spec,
 * connect, then step every environment and send the step, act on the answer, reconnect (and
 * restart every episode) when the connection is lost.
 *
 *   cartpole_actor [ADDRESS [TOKEN_FILE [NUM_ENVS [SEED]]]]
 *   cartpole_actor unix:/tmp/seedrl.sock token 8 1
 *
 * Prints its episodes' mean return at the end; exit status 0 when training ended, 2 when the
 * learner refused it (the message says why), 1 on another failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "seedrl/capi/seedrl.h"

typedef struct {
  double x, x_dot, theta, theta_dot;
  int steps;
  uint64_t rng;
} cartpole;

static double uniform(uint64_t* state) { /* xorshift64*, [0, 1) */
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return (double)((*state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void cartpole_reset(cartpole* c) {
  c->x = 0.1 * uniform(&c->rng) - 0.05;
  c->x_dot = 0.1 * uniform(&c->rng) - 0.05;
  c->theta = 0.1 * uniform(&c->rng) - 0.05;
  c->theta_dot = 0.1 * uniform(&c->rng) - 0.05;
  c->steps = 0;
}

/* One step of Gymnasium's CartPole-v1; returns the step flags (terminated or truncated). */
static uint8_t cartpole_step(cartpole* c, int32_t action) {
  const double gravity = 9.8, total = 1.1, pole_mass = 0.1, half_length = 0.5, tau = 0.02;
  const double force = action == 1 ? 10.0 : -10.0;
  const double cos_t = cos(c->theta), sin_t = sin(c->theta);
  const double temp =
      (force + pole_mass * half_length * c->theta_dot * c->theta_dot * sin_t) / total;
  const double theta_acc = (gravity * sin_t - cos_t * temp) /
                           (half_length * (4.0 / 3.0 - pole_mass * cos_t * cos_t / total));
  const double x_acc = temp - pole_mass * half_length * theta_acc * cos_t / total;
  c->x += tau * c->x_dot;
  c->x_dot += tau * x_acc;
  c->theta += tau * c->theta_dot;
  c->theta_dot += tau * theta_acc;
  c->steps += 1;
  if (fabs(c->x) > 2.4 || fabs(c->theta) > 12.0 * 2.0 * 3.14159265358979323846 / 360.0)
    return SEEDRL_FLAG_TERMINATED;
  return c->steps >= 500 ? SEEDRL_FLAG_TRUNCATED : 0;
}

static void observe(const cartpole* c, float* out) {
  out[0] = (float)c->x;
  out[1] = (float)c->x_dot;
  out[2] = (float)c->theta;
  out[3] = (float)c->theta_dot;
}

int main(int argc, char** argv) {
  const char* address = argc > 1 ? argv[1] : "127.0.0.1:8686";
  const char* token_file = argc > 2 ? argv[2] : NULL;
  const int32_t n = argc > 3 ? (int32_t)atoi(argv[3]) : 8;
  const uint64_t seed = argc > 4 ? (uint64_t)strtoull(argv[4], NULL, 10) : 1;
  const int64_t obs_dims[1] = {4};
  seedrl_actor_options options;
  seedrl_actor* actor = NULL;
  seedrl_status s;
  cartpole* envs;
  float *rewards, *observations, *returns, total_return = 0.0f;
  uint8_t* flags;
  int32_t *actions, e;
  long episodes = 0;

  if (n < 1) {
    fprintf(stderr, "cartpole_actor: NUM_ENVS must be >= 1\n");
    return 1;
  }
  seedrl_actor_options_init(&options);
  options.address = address;
  options.token_file = token_file;
  options.num_envs = n;
  if (seedrl_actor_create(&options, &actor) != SEEDRL_OK ||
      seedrl_actor_observation(actor, SEEDRL_F32, 1, obs_dims) != SEEDRL_OK ||
      seedrl_actor_discrete_actions(actor, 2) != SEEDRL_OK) {
    fprintf(stderr, "cartpole_actor: %s\n", seedrl_last_error());
    seedrl_actor_destroy(actor);
    return 1;
  }
  envs = calloc((size_t)n, sizeof *envs);
  rewards = calloc((size_t)n, sizeof *rewards);
  returns = calloc((size_t)n, sizeof *returns);
  observations = calloc((size_t)n * 4, sizeof *observations);
  flags = calloc((size_t)n, 1);
  actions = calloc((size_t)n, sizeof *actions);
  if (!envs || !rewards || !returns || !observations || !flags || !actions) {
    fprintf(stderr, "cartpole_actor: out of memory\n");
    return 1;
  }
  for (e = 0; e < n; ++e) envs[e].rng = seed * 1000003ULL + (uint64_t)e + 1;

  for (;;) {
    /* Every connection starts every episode afresh. */
    s = seedrl_actor_connect(actor, -1);
    if (s != SEEDRL_OK) break;
    for (e = 0; e < n; ++e) {
      cartpole_reset(&envs[e]);
      observe(&envs[e], observations + 4 * e);
      rewards[e] = 0.0f;
      returns[e] = 0.0f;
      flags[e] = SEEDRL_FLAG_FIRST;
    }
    for (;;) {
      s = seedrl_actor_step(actor, rewards, flags, observations, NULL, actions);
      if (s != SEEDRL_OK) break;
      for (e = 0; e < n; ++e) {
        if (flags[e] & (SEEDRL_FLAG_TERMINATED | SEEDRL_FLAG_TRUNCATED)) {
          /* The ending step's action is not executed: the next episode starts. */
          total_return += returns[e];
          episodes += 1;
          cartpole_reset(&envs[e]);
          rewards[e] = 0.0f;
          returns[e] = 0.0f;
          flags[e] = SEEDRL_FLAG_FIRST;
        } else {
          flags[e] = cartpole_step(&envs[e], actions[e]);
          rewards[e] = 1.0f;
          returns[e] += 1.0f;
        }
        observe(&envs[e], observations + 4 * e);
      }
    }
    if (s != SEEDRL_UNAVAILABLE && s != SEEDRL_DEADLINE_EXCEEDED) break;
    fprintf(stderr, "cartpole_actor: %s; connecting again\n", seedrl_last_error());
  }
  printf("{\"episodes\":%ld,\"mean_return\":%.2f,\"status\":\"%s\"}\n", episodes,
         episodes ? total_return / (float)episodes : 0.0f, seedrl_status_name(s));
  if (s != SEEDRL_CLOSED) fprintf(stderr, "cartpole_actor: %s\n", seedrl_last_error());
  seedrl_actor_destroy(actor);
  free(envs);
  free(rewards);
  free(returns);
  free(observations);
  free(flags);
  free(actions);
  return s == SEEDRL_CLOSED ? 0 : s == SEEDRL_INVALID_ARGUMENT ? 2 : 1;
}
