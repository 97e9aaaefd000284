// The gRPC baseline of bench_transport (built when gRPC is installed): the same TrivialEndpoint
// behind a gRPC bidirectional stream per actor, as seed_rl does it. Synchronous gRPC API on both
// sides; the server hands each received observation to the endpoint without copying it again
// (the batch copy is the endpoint's, as for our transport).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "support/trivial_endpoint.hpp"
#include "transport_bench.grpc.pb.h"

namespace seedrl::bench {

class GrpcInferenceService final : public seedrl_bench::Inference::Service {
 public:
  explicit GrpcInferenceService(InferenceEndpoint& endpoint) : endpoint_(endpoint) {}

  grpc::Status Step(grpc::ServerContext*,
                    grpc::ServerReaderWriter<seedrl_bench::ActionMessage,
                                             seedrl_bench::StepMessage>* stream) override {
    ConnectRequest request;
    request.run_id = new_run_id();
    request.num_envs = 1;
    request.spec.observation = endpoint_.observation_spec();
    request.spec.action = endpoint_.action_spec();
    Connection connection;
    if (const Status connected = endpoint_.connect(request, &connection); !connected.is_ok())
      return {grpc::StatusCode::UNAVAILABLE, connected.to_string()};
    const TensorSpec spec = endpoint_.observation_spec();
    const auto expected = static_cast<std::size_t>(spec.shape.numel()) * size_of(spec.dtype);
    seedrl_bench::StepMessage step;
    seedrl_bench::ActionMessage reply;
    grpc::Status result = grpc::Status::OK;
    while (stream->Read(&step)) {
      std::string& bytes = *step.mutable_observation();
      if (bytes.size() != expected) {
        result = {grpc::StatusCode::INVALID_ARGUMENT, "wrong observation size"};
        break;
      }
      const float reward = step.reward();
      const auto flags = static_cast<std::uint8_t>(step.flags());
      std::int32_t action = 0;
      const Tensor observation =
          Tensor::from_blob(bytes.data(), spec.shape.prepend({1}), spec.dtype);
      const Status status =
          endpoint_.step(connection, {observation, {&reward, 1}, {&flags, 1}, {}}, {&action, 1});
      if (!status.is_ok()) {
        result = {grpc::StatusCode::UNAVAILABLE, status.message()};
        break;
      }
      reply.set_action(action);
      if (!stream->Write(reply)) break;
    }
    endpoint_.disconnect(connection);
    return result;
  }

 private:
  InferenceEndpoint& endpoint_;
};

/// A gRPC server on 127.0.0.1 (an ephemeral port) in front of `endpoint`.
class GrpcServer {
 public:
  explicit GrpcServer(InferenceEndpoint& endpoint) : service_(endpoint) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    SEEDRL_REQUIRE(server_ && port_ > 0, "gRPC baseline: could not listen");
  }
  ~GrpcServer() { server_->Shutdown(std::chrono::system_clock::now()); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  GrpcInferenceService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

/// One actor's stream: step() writes a StepMessage and reads the ActionMessage.
class GrpcActorStream {
 public:
  explicit GrpcActorStream(const std::string& address)
      : channel_(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                           own_connection())),
        stub_(seedrl_bench::Inference::NewStub(channel_)),
        stream_(stub_->Step(&context_)) {}
  ~GrpcActorStream() {
    stream_->WritesDone();
    stream_->Finish();
  }
  bool step(std::span<const std::uint8_t> observation, float reward, std::int32_t* action) {
    message_.set_observation(observation.data(), observation.size());
    message_.set_reward(reward);
    message_.set_flags(0);
    if (!stream_->Write(message_)) return false;
    if (!stream_->Read(&reply_)) return false;
    *action = reply_.action();
    return true;
  }

 private:
  // Each actor gets its own TCP connection, as separate actor processes would (channels with the
  // same arguments otherwise share one).
  static grpc::ChannelArguments own_connection() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return args;
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<seedrl_bench::Inference::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<seedrl_bench::StepMessage, seedrl_bench::ActionMessage>>
      stream_;
  seedrl_bench::StepMessage message_;
  seedrl_bench::ActionMessage reply_;
};

}  // namespace seedrl::bench
