// The command a program ran with, rebuilt from what CLI11 parsed (for run_info.json: a run
// directory says how it was made). agent_cli.hpp builds on it.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

namespace seedrl::examples {

/// The command that ran, rebuilt from what `app` parsed: the program's file name, then every
/// option given, in the order the program declares them, with its values (a value with a space or
/// a shell character in single quotes; a flag bare, or "--flag=false" where it was given so).
/// Defaults are not repeated: the build's own defaults hold. The values of `secrets` (options that
/// carry a secret, such as --token) are written as "***": a run's files and log never hold them.
inline std::string given_command(const CLI::App& app,
                                 std::initializer_list<std::string_view> secrets = {"--token"}) {
  auto quoted = [](const std::string& value) {
    if (!value.empty() && value.find_first_of(" \t\n'\"\\$`&|;<>()*?!#~") == std::string::npos)
      return value;
    std::string out = "'";
    for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::string command = app.get_name();
  if (const auto slash = command.rfind('/'); slash != std::string::npos)
    command.erase(0, slash + 1);
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_name().rfind('-', 0) != 0) continue;
    const std::string name = option->get_name();
    if (option->get_expected_max() != 0) {
      command += " " + name;
      const bool secret = std::find(secrets.begin(), secrets.end(), name) != secrets.end();
      for (const std::string& value : option->results())
        command += " " + (secret ? std::string("***") : quoted(value));
      continue;
    }
    // A flag's results are what it set, negation applied ("!--no-x" given: "false"): the bare
    // flag where that is what it sets, else the flag with the input that sets it.
    const std::string bare = name.substr(name.find_first_not_of('-'));
    for (const std::string& value : option->results()) {
      if (option->get_flag_value(bare, "") == value) {
        command += " " + name;
        continue;
      }
      for (const char* input : {"true", "false"})
        if (option->get_flag_value(bare, input) == value) {
          command += " " + name + "=" + input;
          break;
        }
    }
  }
  return command;
}

}  // namespace seedrl::examples
