/* seedrl's C ABI: an environment in any language that can call C (C, C#, Rust, Julia, Godot,
 * Unity) feeds a seedrl learner over the wire protocol (docs/protocol.md), and a trained
 * checkpoint acts in it. Plain C99, no C++ types; opaque handles; every call returns a status,
 * and seedrl_last_error() says why a call failed (per thread). No exception crosses the boundary.
 * Library: libseedrl_c.so (SONAME libseedrl_c.so.0); CMake: seedrl::c; pkg-config: seedrl-c.
 *
 *   seedrl_actor_options o;
 *   seedrl_actor_options_init(&o);
 *   o.address = "127.0.0.1:8686";
 *   o.token_file = "token";
 *   o.num_envs = 8;
 *   seedrl_actor* actor;
 *   int64_t obs_dims[1] = {4};
 *   if (seedrl_actor_create(&o, &actor) != SEEDRL_OK ||
 *       seedrl_actor_observation(actor, SEEDRL_F32, 1, obs_dims) != SEEDRL_OK ||
 *       seedrl_actor_discrete_actions(actor, 2) != SEEDRL_OK ||
 *       seedrl_actor_connect(actor) != SEEDRL_OK)
 *     fprintf(stderr, "%s\n", seedrl_last_error());
 *   for (;;) {  // rewards[e], flags[e] and observations of every environment, then:
 *     seedrl_status s = seedrl_actor_step(actor, rewards, flags, observations, NULL, actions);
 *     if (s == SEEDRL_CLOSED) break;          // training is over
 *     if (s == SEEDRL_UNAVAILABLE) { ... }   // reconnect (seedrl_actor_connect), restart episodes
 *   }
 *   seedrl_actor_destroy(actor);
 *
 * A step's buffers are the caller's: rewards (num_envs f32), flags (num_envs bytes:
 * SEEDRL_FLAG_*), observations (num_envs observations, row-major, environment 0 first) and one
 * buffer per declared field (num_envs values each, in the order they were declared); the actions
 * come back in the caller's buffer. Nothing is copied but into the frame the wire needs. */
#ifndef SEEDRL_CAPI_SEEDRL_H
#define SEEDRL_CAPI_SEEDRL_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SEEDRL_C_API __declspec(dllexport)
#else
#define SEEDRL_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SEEDRL_C_ABI_VERSION 1

typedef enum seedrl_status {
  SEEDRL_OK = 0,
  SEEDRL_INVALID_ARGUMENT = 1,  /* a bad argument or setting, or refused for good by the learner */
  SEEDRL_UNAVAILABLE = 2,       /* no learner, a lost connection, or asked to come back later */
  SEEDRL_CLOSED = 3,            /* training is over, or seedrl_actor_interrupt was called */
  SEEDRL_DEADLINE_EXCEEDED = 4, /* no answer within the step timeout (a lost connection) */
  SEEDRL_NOT_FOUND = 5,         /* a file that is not there */
  SEEDRL_INTERNAL = 6           /* anything else: the message says what */
} seedrl_status;

/* Element types. Functions take them (and statuses, in seedrl_status_name) as int32_t: an enum's
 * size is the compiler's choice in C, and a value outside the enum is then an error, not UB. */
typedef enum seedrl_dtype { SEEDRL_F32 = 0, SEEDRL_U8 = 1, SEEDRL_I32 = 2 } seedrl_dtype;

/* Step flags, one byte per environment (docs/protocol.md, STEP). */
#define SEEDRL_FLAG_FIRST 1u      /* an episode's first step (reward 0) */
#define SEEDRL_FLAG_TERMINATED 2u /* the step that ends an episode; no bootstrap after it */
#define SEEDRL_FLAG_TRUNCATED 4u  /* the step that ends an episode by a time limit */
#define SEEDRL_FLAG_WAITING 8u    /* a seat of a game of several players that does not act now */

/* Why the last call on this thread that did not return SEEDRL_OK failed; "" if none did. Valid
 * until the thread's next failing call. */
SEEDRL_C_API const char* seedrl_last_error(void);
/* SEEDRL_C_ABI_VERSION of the library (a program may check it against its header's). */
SEEDRL_C_API int seedrl_abi_version(void);
/* The name of a status ("ok", "unavailable", ...). */
SEEDRL_C_API const char* seedrl_status_name(int32_t status);

/* ---- an actor: environments stepped for a learner ---- */

typedef struct seedrl_actor seedrl_actor;

typedef struct seedrl_actor_options {
  const char* address;         /* host:port, [v6]:port or unix:/path; NULL: 127.0.0.1:8686 */
  const char* token;           /* the learner's shared secret, or NULL */
  const char* token_file;      /* or a file holding it (its first line; not readable by others) */
  int32_t num_envs;            /* environments stepped together, 1..65535 */
  int32_t evaluation;          /* 1: act greedily and store nothing */
  const char* tls_ca;          /* PEM CA of the learner's certificate: TLS when set */
  const char* tls_cert;        /* PEM certificate of this actor (mutual TLS), or NULL */
  const char* tls_key;         /* its private key */
  const char* tls_server_name; /* the name the learner's certificate is checked against; NULL:
                                  the address's host */
  int32_t connect_timeout_ms;  /* 0: 5,000 */
  int32_t step_timeout_ms;     /* 0: 120,000 */
} seedrl_actor_options;

/* The defaults above. */
SEEDRL_C_API void seedrl_actor_options_init(seedrl_actor_options* options);
/* A new actor (not yet connected); *actor is NULL on failure. */
SEEDRL_C_API seedrl_status seedrl_actor_create(const seedrl_actor_options* options,
                                               seedrl_actor** actor);
/* The step spec, before seedrl_actor_connect: the observation (rank 0..6, dims outermost first),
 * the actions (one of the three), and any fields the environments declare beside the
 * observation ("action_mask", u8 [number of actions], is the legal-action mask: any non-zero byte
 * allows its action). They must equal the learner's, or connect says what differs. */
SEEDRL_C_API seedrl_status seedrl_actor_observation(seedrl_actor* actor, int32_t dtype,
                                                    int32_t rank, const int64_t* dims);
SEEDRL_C_API seedrl_status seedrl_actor_discrete_actions(seedrl_actor* actor, int32_t num_actions);
SEEDRL_C_API seedrl_status seedrl_actor_branched_actions(seedrl_actor* actor, int32_t branches,
                                                         const int32_t* sizes);
SEEDRL_C_API seedrl_status seedrl_actor_box_actions(seedrl_actor* actor, int32_t dims,
                                                    const float* low, const float* high);
SEEDRL_C_API seedrl_status seedrl_actor_add_field(seedrl_actor* actor, const char* name,
                                                  int32_t dtype, int32_t rank, const int64_t* dims);
/* Connects and shakes hands, retrying with back-off (100 ms doubling to 5 s) while the learner
 * is unavailable, for at most `patience_ms` (0: once; < 0: until it answers). Every connection
 * starts every episode afresh: the next step's flags must all be SEEDRL_FLAG_FIRST. */
SEEDRL_C_API seedrl_status seedrl_actor_connect(seedrl_actor* actor, int64_t patience_ms);
/* One lock-step exchange for discrete or branched actions: `actions` receives num_envs (x K for
 * K branches) int32. `fields` holds one buffer per declared field (NULL when none). */
SEEDRL_C_API seedrl_status seedrl_actor_step(seedrl_actor* actor, const float* rewards,
                                             const uint8_t* flags, const void* observations,
                                             const void* const* fields, int32_t* actions);
/* The same for box actions: `actions` receives num_envs rows of D floats within the bounds. */
SEEDRL_C_API seedrl_status seedrl_actor_step_box(seedrl_actor* actor, const float* rewards,
                                                 const uint8_t* flags, const void* observations,
                                                 const void* const* fields, float* actions);
/* Values an action of one environment has: 1 (discrete), K (branches) or D (a box). */
SEEDRL_C_API int32_t seedrl_actor_action_width(const seedrl_actor* actor);
/* Makes a connect or step in progress on another thread, and every later one, return
 * SEEDRL_CLOSED. Thread-safe. */
SEEDRL_C_API void seedrl_actor_interrupt(seedrl_actor* actor);
/* Says GOODBYE (when connected), closes and frees. NULL is allowed. */
SEEDRL_C_API void seedrl_actor_destroy(seedrl_actor* actor);

/* ---- a policy: a trained checkpoint acting in the program ---- */

typedef struct seedrl_policy seedrl_policy;

/* Loads a checkpoint file, or a training run's logdir (its newest checkpoint that verifies). */
SEEDRL_C_API seedrl_status seedrl_policy_load(const char* path, seedrl_policy** policy);
/* Floats one observation holds, and values an action has (1, K or D). */
SEEDRL_C_API int64_t seedrl_policy_observation_size(const seedrl_policy* policy);
SEEDRL_C_API int32_t seedrl_policy_action_width(const seedrl_policy* policy);
/* Acts greedily on `batch` f32 observations (row-major); discrete or branched actions into
 * `actions` (batch x width int32). `mask`: batch rows of u8 legal-action masks, or NULL. A
 * recurrent policy keeps each row's state between calls until seedrl_policy_reset. */
SEEDRL_C_API seedrl_status seedrl_policy_act(seedrl_policy* policy, int32_t batch,
                                             const float* observations, const uint8_t* mask,
                                             int32_t* actions);
/* The same for a box policy: batch rows of D floats (the Gaussian's mean, clipped to the box). */
SEEDRL_C_API seedrl_status seedrl_policy_act_box(seedrl_policy* policy, int32_t batch,
                                                 const float* observations, float* actions);
/* Forgets the recurrent state of every row. */
SEEDRL_C_API void seedrl_policy_reset(seedrl_policy* policy);
SEEDRL_C_API void seedrl_policy_destroy(seedrl_policy* policy);

#ifdef __cplusplus
}
#endif

#endif /* SEEDRL_CAPI_SEEDRL_H */
