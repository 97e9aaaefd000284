// The generations of a checkpoint on disk (io/checkpoint.hpp): their names, moving them back to
// make room for a new one, and the replay files each generation names. Private to src/io.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seedrl::io {

/// Metadata keys of a checkpoint's link to its replay file.
inline constexpr std::string_view kReplayKey = "replay";
inline constexpr std::string_view kReplayHashKey = "replay_fnv1a64";

/// The existing generations of `path` with their numbers, newest (lowest number) first.
std::vector<std::pair<int, std::string>> existing_generations(const std::string& path);

/// Moves the existing generations of `path` one place back, so that `path` is free for a new
/// newest one, keeping `generations` - 1 of them; the oldest beyond that are removed.
void make_room_for_generation(const std::string& path, int generations);

/// Where the replay state `replay` of a checkpoint at `path` goes: its file name (in the
/// checkpoint's directory), that name's path, and its content's hash (FNV-1a, 16 hex digits).
struct ReplayLink {
  std::string name, path, hash;
};
ReplayLink link_replay(const std::string& path, std::string_view replay);

/// Whether `name` is a replay file's name ("<stem>.replay.<hash>.seedrl", a name without a
/// directory, a leading dot or anything but letters, digits, '_', '-' and '.').
bool is_replay_name(std::string_view name);

/// Removes the replay files of `path`'s directory that no generation of `path` names (and the
/// unlinked "replay.seedrl" of older versions once no generation goes without a link).
void remove_unlinked_replays(const std::string& path);

}  // namespace seedrl::io
