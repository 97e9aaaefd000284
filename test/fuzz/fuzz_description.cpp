// libFuzzer target for the network-description parser (nn::parse_description), which reads the
// "network" text of a checkpoint: whatever the text, it returns a valid NetworkOptions or throws
// seedrl::Error; it never reads outside the text, crashes, hangs or accepts sizes no network can
// have; and what it accepts, described again, reads back to the same description.
//
// Built with clang (-fsanitize=fuzzer,address,undefined) by test/fuzz/CMakeLists.txt.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "seedrl/core/error.hpp"
#include "seedrl/nn/description.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedrl;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nn::NetworkOptions options;
  try {
    options = nn::parse_description(text, "fuzz");
  } catch (const Error&) {
    return 0;
  }
  // Accepted: a valid network whose every size is within the reader's bounds.
  options.validate();
  const std::string described = nn::describe(options);
  const nn::NetworkOptions again = nn::parse_description(described, "fuzz (described again)");
  if (nn::describe(again) != described) {
    std::fprintf(stderr, "fuzz_description: '%s' reads back as '%s'\n", described.c_str(),
                 nn::describe(again).c_str());
    std::abort();
  }
  return 0;
}
