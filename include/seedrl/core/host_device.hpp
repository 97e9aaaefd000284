// SEEDRL_HOST_DEVICE marks small inline functions that both the CPU and the CUDA backend call,
// so that element-wise math (optimizer rules, activations) has exactly one definition.
#pragma once

#if defined(__CUDACC__)
#define SEEDRL_HOST_DEVICE __host__ __device__
#else
#define SEEDRL_HOST_DEVICE
#endif
