// A downstream program: trains the CartPole-sized network for a few steps through the installed
// package and checks that the loss went down.
#include <seedrl/seedrl.hpp>

#include <cstdio>

int main() {
  using Backend = seedrl::cpu::Backend;
  seedrl::nn::Network<Backend> net(seedrl::nn::NetworkOptions::mlp(4, 2));
  seedrl::nn::Adam<Backend> adam(net.parameters());
  seedrl::Tensor obs = seedrl::Tensor::zeros({1, 8, 4});
  for (int i = 0; i < 32; ++i) obs.data<float>()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  seedrl::Tensor grad = seedrl::Tensor::zeros({1, 8});
  double first = 0.0, last = 0.0;
  for (int step = 0; step < 50; ++step) {
    const auto& out = net.forward(obs);
    double loss = 0.0;
    for (int i = 0; i < 8; ++i) {
      const float error = out.values.data<float>()[i] - 1.0f;
      loss += 0.5 * error * error;
      grad.data<float>()[i] = error;
    }
    if (step == 0) first = loss;
    last = loss;
    net.backward({.values = grad});
    adam.step(1e-2f);
  }
  std::printf("seedrl %s: value loss %.4f -> %.6f\n", seedrl::kVersion, first, last);
  // The compiled transport is in the package too.
  const seedrl::SocketAddress address = seedrl::SocketAddress::parse("[::1]:8686");
  std::string frame;
  seedrl::protocol::encode_error(frame, {seedrl::protocol::ErrorCode::finished, "done"});
  seedrl::protocol::ErrorFrame decoded;
  const auto payload = std::span<const std::uint8_t>(
                           reinterpret_cast<const std::uint8_t*>(frame.data()), frame.size())
                           .subspan(seedrl::protocol::kHeaderBytes);
  const bool transport_ok = address.port == 8686 &&
                            seedrl::protocol::decode_error(payload, &decoded).is_ok() &&
                            decoded.message == "done";
  std::printf("transport: %s\n", transport_ok ? "ok" : "broken");
  return last < first * 0.1 && transport_ok ? 0 : 1;
}
