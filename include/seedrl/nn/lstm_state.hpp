// LstmState: the recurrent state of an LSTM layer, shared by every backend.
#pragma once

#include "seedrl/core/tensor.hpp"

namespace seedrl::nn {

/// Hidden state h and cell state c, each [B, hidden_size] f32. Undefined tensors mean zeros.
struct LstmState {
  Tensor h;
  Tensor c;
  bool defined() const { return h.defined() && c.defined(); }
};

}  // namespace seedrl::nn
