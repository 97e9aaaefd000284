// CommandLine and Option over CLI11: the one translation unit that compiles CLI11
// (seedrl/cli/command_line.hpp says why).
#include "seedrl/cli/command_line.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <utility>

namespace seedrl::cli {

Option& Option::range(double low, double high) {
  option_->check(CLI::Range(low, high));
  return *this;
}
Option& Option::positive() {
  option_->check(CLI::PositiveNumber);
  return *this;
}
Option& Option::non_negative() {
  option_->check(CLI::NonNegativeNumber);
  return *this;
}
Option& Option::one_of(const std::vector<std::string>& values) {
  option_->check(CLI::IsMember(values));
  return *this;
}
Option& Option::required() {
  option_->required();
  return *this;
}
Option& Option::values(int count) {
  option_->expected(count);
  return *this;
}
Option& Option::delimiter(char separator) {
  option_->delimiter(separator);
  return *this;
}
std::size_t Option::count() const {
  return option_ == nullptr ? 0 : option_->count();
}

CommandLine::CommandLine(const std::string& description)
    : owned_(std::make_unique<CLI::App>(description)), app_(owned_.get()) {
  app_->option_defaults()->always_capture_default();
}
CommandLine::CommandLine(CLI::App* subcommand) : app_(subcommand) {
  app_->option_defaults()->always_capture_default();
}
CommandLine::~CommandLine() = default;

Option CommandLine::option(const std::string& name, std::int32_t& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::int64_t& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::uint64_t& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, float& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, double& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, bool& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::string& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::vector<std::int32_t>& value,
                           const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::vector<std::int64_t>& value,
                           const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::vector<double>& value,
                           const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::optional<double>& value,
                           const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::option(const std::string& name, std::vector<std::string>& value,
                           const std::string& help) {
  return Option(app_->add_option(name, value, help));
}
Option CommandLine::flag(const std::string& name, bool& value, const std::string& help) {
  return Option(app_->add_flag(name, value, help));
}
void CommandLine::remove(const std::string& name) {
  app_->remove_option(app_->get_option(name));
}

std::size_t CommandLine::count(const std::string& name) const {
  return app_->count(name);
}
void CommandLine::on_parsed(std::function<void()> callback) {
  app_->final_callback(std::move(callback));
}

CommandLine& CommandLine::subcommand(const std::string& name, const std::string& description) {
  subcommands_.push_back(
      std::unique_ptr<CommandLine>(new CommandLine(app_->add_subcommand(name, description))));
  return *subcommands_.back();
}
void CommandLine::require_subcommands(std::size_t min, std::size_t max) {
  app_->require_subcommand(min, max);
  app_->fallthrough();
}
bool CommandLine::given() const {
  return app_->parsed();
}

std::optional<int> CommandLine::parse(int argc, const char* const* argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);
  }
  return std::nullopt;
}

std::string CommandLine::given_command(std::initializer_list<std::string_view> secrets) const {
  auto quoted = [](const std::string& value) {
    if (!value.empty() && value.find_first_of(" \t\n'\"\\$`&|;<>()*?!#~") == std::string::npos)
      return value;
    std::string out = "'";
    for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  std::string command = app_->get_name();
  if (const auto slash = command.rfind('/'); slash != std::string::npos)
    command.erase(0, slash + 1);
  for (const CLI::Option* option : app_->get_options()) {
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

std::optional<std::string> given_value(int argc, const char* const* argv, std::string_view name) {
  std::optional<std::string> value;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == name) {
      if (i + 1 < argc && std::string_view(argv[i + 1]).rfind("--", 0) != 0)
        value = argv[++i];
      else
        value.reset();
    } else if (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
               arg[name.size()] == '=') {
      value = std::string(arg.substr(name.size() + 1));
    }
  }
  return value;
}

}  // namespace seedrl::cli
