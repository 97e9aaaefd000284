// A program's command line (seedrl::cli, the component the example programs and benchmarks parse
// their options with): options bound to variables, checked, parsed, and the command that ran
// rebuilt for run_info.json. It is CLI11 underneath, compiled once in the component's library
// (src/cli/command_line.cpp): CLI11 is header-only, and a program that includes it compiles its
// parser, its help formatter and its validators again, 10 to 15 seconds of every program's build.
// A program that needs more of CLI11 takes app() and includes <CLI/CLI.hpp> itself (CLI11 is then
// a dependency of that program).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace seedrl::cli {

/// One option of a CommandLine, for saying what its values must be.
class Option {
 public:
  Option() = default;                                      ///< no option: count() is 0
  Option& range(double low, double high);                  ///< low <= value <= high
  Option& positive();                                      ///< value > 0
  Option& non_negative();                                  ///< value >= 0
  Option& one_of(const std::vector<std::string>& values);  ///< one of these words
  Option& required();                                      ///< the command line must give it
  Option& values(int count);                               ///< exactly this many values
  Option& delimiter(char separator);  ///< a list option's values also split at `separator`
  /// How often the command line gave it (0: the default holds).
  std::size_t count() const;

 private:
  friend class CommandLine;
  explicit Option(CLI::Option* option) : option_(option) {}
  CLI::Option* option_ = nullptr;
};

/// A program's (or a subcommand's) options. --help shows each option with its default.
class CommandLine {
 public:
  explicit CommandLine(const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// An option bound to `value`, which holds its default until the command line sets it.
  Option option(const std::string& name, std::int32_t& value, const std::string& help);
  Option option(const std::string& name, std::int64_t& value, const std::string& help);
  Option option(const std::string& name, std::uint64_t& value, const std::string& help);
  Option option(const std::string& name, float& value, const std::string& help);
  Option option(const std::string& name, double& value, const std::string& help);
  Option option(const std::string& name, bool& value, const std::string& help);  ///< true/false
  Option option(const std::string& name, std::string& value, const std::string& help);
  Option option(const std::string& name, std::vector<std::int32_t>& value, const std::string& help);
  Option option(const std::string& name, std::vector<std::int64_t>& value, const std::string& help);
  Option option(const std::string& name, std::vector<double>& value, const std::string& help);
  Option option(const std::string& name, std::vector<std::string>& value, const std::string& help);
  /// An option that may stay unset (std::nullopt).
  Option option(const std::string& name, std::optional<double>& value, const std::string& help);
  /// A flag without a value: `name` sets `value` true; "!--no-x" sets it false.
  Option flag(const std::string& name, bool& value, const std::string& help);
  /// The option called `name` leaves this command line (a program that sets it itself).
  void remove(const std::string& name);

  /// How often the command line gave the option `name` (0: its default holds).
  std::size_t count(const std::string& name) const;
  /// Runs `callback` once the command line is parsed and checked.
  void on_parsed(std::function<void()> callback);

  /// A subcommand with options of its own (`program ppo --epochs 4`); it lives as long as this.
  CommandLine& subcommand(const std::string& name, const std::string& description);
  /// From `min` to `max` subcommands must be given; options of this command line may follow
  /// them.
  void require_subcommands(std::size_t min, std::size_t max);
  /// Whether the command line named this subcommand.
  bool given() const;

  /// Parses the program's arguments. An exit status when the program should end now: --help
  /// (status 0, the help printed) or a bad command line (the error said on stderr).
  std::optional<int> parse(int argc, const char* const* argv);

  /// The command that ran, rebuilt from what was parsed: the program's file name, then every
  /// option given, in the order the program declares them, with its values (a value with a space
  /// or a shell character in single quotes; a flag bare, or "--flag=false" where it was given
  /// so). Defaults are not repeated: the build's own defaults hold. The values of `secrets`
  /// (options that carry a secret, such as --token) are written as "***": a run's files and log
  /// never hold them.
  std::string given_command(std::initializer_list<std::string_view> secrets = {"--token"}) const;

  /// CLI11 itself, for what this class does not offer (include <CLI/CLI.hpp>).
  CLI::App& app() { return *app_; }

 private:
  explicit CommandLine(CLI::App* subcommand);
  std::unique_ptr<CLI::App> owned_;  // the program's; a subcommand's belongs to its parent
  CLI::App* app_;
  std::vector<std::unique_ptr<CommandLine>> subcommands_;
};

/// The value `argv` gives the option `name` before any parse ("NAME VALUE" or "NAME=VALUE";
/// nothing after "--" counts): for a program whose other defaults depend on it
/// (selfplay's --env picks the game's recipe). Nothing when it is not given or has no value; the
/// parse that follows checks it as it checks every option.
std::optional<std::string> given_value(int argc, const char* const* argv, std::string_view name);

}  // namespace seedrl::cli
