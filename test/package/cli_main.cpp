// seedrl::cli from the installed package: a command line parsed and the command that ran rebuilt,
// in a program that includes nothing of CLI11 (the component's library compiled it).
#include <cstdint>
#include <cstdio>
#include <string>

#include "seedrl/cli/command_line.hpp"

int main() {
  seedrl::cli::CommandLine app("a consumer of seedrl::cli");
  std::int64_t frames = 10;
  std::string name = "unset";
  app.option("--frames", frames, "frames to train").positive();
  app.option("--name", name, "a name");
  const char* argv[] = {"consumer_cli", "--frames", "42"};
  if (const auto exit = app.parse(3, argv)) return *exit;
  const std::string command = app.given_command();
  std::printf("consumer_cli: %s\n", command.c_str());
  return frames == 42 && name == "unset" && command == "consumer_cli --frames 42" ? 0 : 1;
}
