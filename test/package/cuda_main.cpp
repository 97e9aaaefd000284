// A downstream program using the installed GPU backend: it must compile with the host compiler
// alone (the backend's headers include no CUDA header) and link through seedrl::cuda. On a
// machine with a GPU it trains the same tiny regression as main.cpp there; without one it
// reports that and succeeds.
#include <seedrl/backend/cuda/backend.hpp>
#include <seedrl/seedrl.hpp>

#include <cstdio>

int main() {
  if (!seedrl::cuda::available()) {
    std::printf("seedrl::cuda linked; no GPU here (%s)\n",
                seedrl::cuda::unavailable_reason().c_str());
    return 0;
  }
  using Backend = seedrl::cuda::Backend;
  seedrl::nn::Network<Backend> net(seedrl::nn::NetworkOptions::mlp(4, 2));
  seedrl::nn::Adam<Backend> adam(net.parameters());
  seedrl::Tensor obs = seedrl::Tensor::zeros({1, 8, 4});
  for (int i = 0; i < 32; ++i) obs.data<float>()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  const seedrl::Tensor device_obs = obs.clone(seedrl::Device::cuda);
  seedrl::Tensor grad = seedrl::Tensor::zeros({1, 8});
  double first = 0.0, last = 0.0;
  for (int step = 0; step < 50; ++step) {
    const seedrl::Tensor values = net.forward(device_obs).values.clone(seedrl::Device::cpu);
    double loss = 0.0;
    for (int i = 0; i < 8; ++i) {
      const float error = values.data<float>()[i] - 1.0f;
      loss += 0.5 * error * error;
      grad.data<float>()[i] = error;
    }
    if (step == 0) first = loss;
    last = loss;
    net.backward({.values = grad.clone(seedrl::Device::cuda)});
    adam.step(1e-2f);
  }
  std::printf("%s: value loss %.4f -> %.6f\n", seedrl::cuda::device_info().describe().c_str(),
              first, last);
  return last < first * 0.1 ? 0 : 1;
}
