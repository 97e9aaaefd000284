// seedrl: the umbrella header. Brings in the CPU library; never includes CUDA (the GPU backend
// is an opt-in header of its own).
#pragma once

#include "seedrl/version.hpp"

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"
#include "seedrl/core/dtype.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/scratch_buffer.hpp"
#include "seedrl/core/shape.hpp"
#include "seedrl/core/storage.hpp"
#include "seedrl/core/tensor.hpp"

#include "seedrl/nn/backend.hpp"
#include "seedrl/nn/gradient_clipping.hpp"
#include "seedrl/nn/init.hpp"
#include "seedrl/nn/layer_options.hpp"
#include "seedrl/nn/learning_rate.hpp"
#include "seedrl/nn/lstm_state.hpp"
#include "seedrl/nn/network.hpp"
#include "seedrl/nn/optimizer.hpp"
#include "seedrl/nn/parameter.hpp"
#include "seedrl/nn/sequential.hpp"
#include "seedrl/nn/softmax.hpp"
#include "seedrl/nn/update_rules.hpp"

#include "seedrl/backend/cpu/backend.hpp"

#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/algo/epsilon_schedule.hpp"
#include "seedrl/algo/n_step_targets.hpp"
#include "seedrl/algo/sequence_priority.hpp"
#include "seedrl/algo/value_rescale.hpp"
#include "seedrl/algo/vtrace.hpp"

#include "seedrl/replay/item_codec.hpp"
#include "seedrl/replay/replay_buffer.hpp"
#include "seedrl/replay/sum_tree.hpp"
