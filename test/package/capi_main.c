/* A C program of the installed package: the C ABI alone (seedrl::c), C99. */
#include <stdio.h>
#include <string.h>

#include "seedrl/capi/seedrl.h"

int main(void) {
  seedrl_actor_options options;
  seedrl_actor* actor = NULL;
  seedrl_policy* policy = NULL;
  if (seedrl_abi_version() != SEEDRL_C_ABI_VERSION) return 1;
  seedrl_actor_options_init(&options);
  options.num_envs = 0;
  if (seedrl_actor_create(&options, &actor) != SEEDRL_INVALID_ARGUMENT || actor != NULL) return 2;
  if (strstr(seedrl_last_error(), "num_envs") == NULL) return 3;
  if (seedrl_policy_load("/nonexistent.safetensors", &policy) != SEEDRL_NOT_FOUND) return 4;
  printf("consumer_c: the C ABI %d answers\n", seedrl_abi_version());
  return 0;
}
