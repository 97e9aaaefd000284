// The shared secret of a learner and its actors (SocketServerOptions::token,
// RemoteClientOptions::token), from where a program should take it: a file only its owner can
// read, or the SEEDRL_TOKEN environment variable. A command line is the worst place for it
// (every user of the machine reads it in the process list, and seedrl records commands in a run's
// files with the token as "***").
//
//   std::string token = seedrl::resolve_token({.file = "/run/secrets/seedrl"});
//   // one of: options.token (given), the file's first line, $SEEDRL_TOKEN, or "" (none)
#pragma once

#include <string>
#include <string_view>

namespace seedrl {

/// The environment variable both sides read the token from when no other source is given.
inline constexpr const char* kTokenEnvironmentVariable = "SEEDRL_TOKEN";

/// The token in `path`: its first line without the line end (a file written by `echo`, or by
/// `openssl rand -hex 32 > FILE`). Throws seedrl::Error naming `setting` and the path when the
/// file cannot be read, is not a regular file, is empty, holds more than
/// protocol::kMaxTokenBytes bytes on its first line, or may be read or written by users other
/// than its owner (as ssh refuses such private keys: `chmod 600 FILE`).
std::string read_token_file(const std::string& path, std::string_view setting = "--token-file");

struct TokenSources {
  std::string given;        ///< e.g. --token; wins when not empty
  std::string file;         ///< e.g. --token-file; read with read_token_file
  bool environment = true;  ///< fall back to $SEEDRL_TOKEN
  std::string_view given_setting = "--token", file_setting = "--token-file";
};

/// The token from the first source that has one: `given`, then `file`, then $SEEDRL_TOKEN; ""
/// when none has. A token both given and in a file is refused (which one was meant?), naming both
/// settings.
std::string resolve_token(const TokenSources& sources);

}  // namespace seedrl
