// ONNX Runtime for the tests: an independent runtime that executes seedrl's exported models.
//
// ONNX Runtime is not in Debian. scripts/install-deps.sh fetches its shared library with the npm
// package onnxruntime-node (which carries libonnxruntime.so.1 but no C header) into .deps/; the
// library is opened with dlopen at run time, from $SEEDRL_ONNXRUNTIME or the path CMake baked in
// (SEEDRL_ONNXRUNTIME_LIBRARY). Tests skip with a message saying so when it is absent.
//
// The C API is a table of function pointers (OrtApi) that only ever grows at the end, so the
// entries used here are called by their index in onnxruntime_c_api.h (all from version 1).
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "seedrl/core/error.hpp"
#include "seedrl/core/tensor.hpp"

#ifndef SEEDRL_ONNXRUNTIME_LIBRARY
#define SEEDRL_ONNXRUNTIME_LIBRARY ""
#endif

namespace seedrl::test {

class OnnxRuntime {
 public:
  /// The runtime, or null with `why` set when its library cannot be loaded.
  static OnnxRuntime* get(std::string& why) {
    static std::string failure;
    static OnnxRuntime* runtime = load(failure);
    why = failure;
    return runtime;
  }

  const char* version() const { return version_; }

 private:
  // Indices into OrtApi (onnxruntime_c_api.h, the version-1 block) and the entries' types.
  template <int Index, class Signature>
  struct Entry {
    static constexpr int index = Index;
    using type = Signature;
  };
  using GetErrorMessage = Entry<2, const char* (*)(const void*)>;
  using CreateEnv = Entry<3, void* (*)(int, const char*, void**)>;
  using CreateSessionFromArray =
      Entry<8, void* (*)(const void*, const void*, std::size_t, const void*, void**)>;
  using Run = Entry<9, void* (*)(void*, const void*, const char* const*, const void* const*,
                                 std::size_t, const char* const*, std::size_t, void**)>;
  using CreateSessionOptions = Entry<10, void* (*)(void**)>;
  using SetIntraOpNumThreads = Entry<24, void* (*)(void*, int)>;
  using CreateTensorWithDataAsOrtValue =
      Entry<49, void* (*)(const void*, void*, std::size_t, const std::int64_t*, std::size_t, int,
                          void**)>;
  using GetTensorMutableData = Entry<51, void* (*)(void*, void**)>;
  using GetDimensionsCount = Entry<61, void* (*)(const void*, std::size_t*)>;
  using GetDimensions = Entry<62, void* (*)(const void*, std::int64_t*, std::size_t)>;
  using GetTensorTypeAndShape = Entry<65, void* (*)(const void*, void**)>;
  using CreateCpuMemoryInfo = Entry<69, void* (*)(int, int, void**)>;
  using ReleaseStatus = Entry<93, void (*)(void*)>;
  using ReleaseSession = Entry<95, void (*)(void*)>;
  using ReleaseValue = Entry<96, void (*)(void*)>;
  using ReleaseTensorTypeAndShapeInfo = Entry<99, void (*)(void*)>;
  using ReleaseSessionOptions = Entry<100, void (*)(void*)>;

  struct ApiBase {
    const void* const* (*get_api)(std::uint32_t version);
    const char* (*get_version_string)();
  };

  template <class E, class... Args>
  auto call(Args... args) {
    return reinterpret_cast<typename E::type>(const_cast<void*>(api_[E::index]))(args...);
  }

  void check(void* status, const char* what) {
    if (status == nullptr) return;
    const std::string message = call<GetErrorMessage>(static_cast<const void*>(status));
    call<ReleaseStatus>(status);
    fail("ONNX Runtime ", what, ": ", message);
  }

  Tensor to_tensor(void* value) {
    void* info = nullptr;
    check(call<GetTensorTypeAndShape>(static_cast<const void*>(value), &info),
          "GetTensorTypeAndShape");
    std::size_t rank = 0;
    check(call<GetDimensionsCount>(static_cast<const void*>(info), &rank), "GetDimensionsCount");
    std::vector<std::int64_t> dims(rank);
    check(call<GetDimensions>(static_cast<const void*>(info), dims.data(), rank), "GetDimensions");
    call<ReleaseTensorTypeAndShapeInfo>(info);
    void* data = nullptr;
    check(call<GetTensorMutableData>(value, &data), "GetTensorMutableData");
    Tensor t = Tensor::empty(Shape(std::span<const std::int64_t>(dims)), DType::f32);
    std::memcpy(t.raw_data(), data, t.bytes());
    return t;
  }

  static OnnxRuntime* load(std::string& why) {
    const char* from_env = std::getenv("SEEDRL_ONNXRUNTIME");
    const std::string path = from_env != nullptr ? from_env : SEEDRL_ONNXRUNTIME_LIBRARY;
    if (path.empty()) {
      why = "no ONNX Runtime library configured (set SEEDRL_ONNXRUNTIME to libonnxruntime.so)";
      return nullptr;
    }
    void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      why = str_cat("ONNX Runtime not loaded from ", path, " (", ::dlerror(),
                    "); scripts/install-deps.sh installs it where npm is present, or set "
                    "SEEDRL_ONNXRUNTIME");
      return nullptr;
    }
    auto get_base = reinterpret_cast<const ApiBase* (*)()>(::dlsym(library, "OrtGetApiBase"));
    const ApiBase* base = get_base != nullptr ? get_base() : nullptr;
    const void* const* api = base != nullptr ? base->get_api(1) : nullptr;
    if (api == nullptr) {
      why = str_cat(path, ": no OrtGetApiBase or no version-1 C API");
      return nullptr;
    }
    auto* runtime = new OnnxRuntime(api, base->get_version_string());  // lives for the process
    runtime->check(runtime->call<CreateEnv>(3, "seedrl-test", &runtime->env_), "CreateEnv");
    runtime->check(runtime->call<CreateCpuMemoryInfo>(0, 0, &runtime->memory_),
                   "CreateCpuMemoryInfo");
    return runtime;
  }

  OnnxRuntime(const void* const* api, const char* version) : api_(api), version_(version) {}

  const void* const* api_;
  const char* version_;
  void* env_ = nullptr;
  void* memory_ = nullptr;

 public:
  /// A loaded model; run() takes host tensors (f32 or u8) and returns f32 host tensors.
  class Session {
   public:
    Session(OnnxRuntime& ort, const std::string& model_bytes) : ort_(ort) {
      void* options = nullptr;
      ort_.check(ort_.call<CreateSessionOptions>(&options), "CreateSessionOptions");
      ort_.check(ort_.call<SetIntraOpNumThreads>(options, 1), "SetIntraOpNumThreads");
      void* status = ort_.call<CreateSessionFromArray>(ort_.env_, model_bytes.data(),
                                                       model_bytes.size(), options, &session_);
      ort_.call<ReleaseSessionOptions>(options);
      ort_.check(status, "CreateSessionFromArray");
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() { ort_.call<ReleaseSession>(session_); }

    std::vector<Tensor> run(const std::vector<std::string>& input_names,
                            const std::vector<Tensor>& inputs,
                            const std::vector<std::string>& output_names) {
      std::vector<void*> values(inputs.size(), nullptr), outputs(output_names.size(), nullptr);
      auto release = [&] {
        for (void* v : values) ort_.call<ReleaseValue>(v);
        for (void* v : outputs) ort_.call<ReleaseValue>(v);
      };
      try {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const Tensor& t = inputs[i];
          const std::vector<std::int64_t> shape(t.shape().dims().begin(), t.shape().dims().end());
          const int type = t.dtype() == DType::u8 ? 2 : 1;  // ONNX's UINT8 and FLOAT
          ort_.check(ort_.call<CreateTensorWithDataAsOrtValue>(
                         ort_.memory_, const_cast<void*>(t.raw_data()), t.bytes(), shape.data(),
                         shape.size(), type, &values[i]),
                     "CreateTensorWithDataAsOrtValue");
        }
        std::vector<const char*> in_names, out_names;
        for (const std::string& n : input_names) in_names.push_back(n.c_str());
        for (const std::string& n : output_names) out_names.push_back(n.c_str());
        ort_.check(ort_.call<Run>(session_, nullptr, in_names.data(), values.data(), values.size(),
                                  out_names.data(), out_names.size(), outputs.data()),
                   "Run");
        std::vector<Tensor> results;
        for (void* v : outputs) results.push_back(ort_.to_tensor(v));
        release();
        return results;
      } catch (...) {
        release();
        throw;
      }
    }

   private:
    OnnxRuntime& ort_;
    void* session_ = nullptr;
  };
};

}  // namespace seedrl::test
