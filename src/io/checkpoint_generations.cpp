// The generations of a checkpoint on disk, and the replay files they name
// (checkpoint_generations.hpp).
#include "checkpoint_generations.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/error.hpp"
#include "seedrl/io/checkpoint.hpp"

namespace seedrl::io {

namespace fs = std::filesystem;

namespace {

std::string replay_prefix(const std::string& path) {
  return fs::path(path).stem().string() + ".replay.";
}

// The replay a checkpoint's metadata names, if any: its name, checked to be one of `path`'s replay
// names (a crafted file cannot make seedrl read another).
std::optional<std::string> named_replay(const Metadata& metadata, const std::string& path) {
  // `path` only names the checkpoint in errors: a generation moved back keeps its replay's name.
  const auto it = metadata.find(std::string(kReplayKey));
  if (it == metadata.end()) return std::nullopt;
  SEEDRL_REQUIRE(is_replay_name(it->second), path, ": metadata '", kReplayKey, "' is '", it->second,
                 "', not the name of a replay file beside it");
  return it->second;
}

constexpr std::string_view kLegacyReplay = "replay.seedrl";

}  // namespace

// The existing generations of `path` with their numbers, newest (lowest number) first.
std::vector<std::pair<int, std::string>> existing_generations(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string stem = p.stem().string() + ".", extension = p.extension().string();
  std::vector<std::pair<int, std::string>> found;
  if (fs::exists(p)) found.emplace_back(0, path);
  const fs::path directory = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(stem) || !name.ends_with(extension) ||
        name.size() <= stem.size() + extension.size())
      continue;
    const std::string_view digits =
        std::string_view(name).substr(stem.size(), name.size() - stem.size() - extension.size());
    int n = 0;
    const auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (status != std::errc() || end != digits.data() + digits.size() || n < 1 ||
        checkpoint_generation(path, n) != (p.parent_path() / name).string())
      continue;  // not a generation's name (e.g. a leading zero, a temporary file)
    found.emplace_back(n, checkpoint_generation(path, n));
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Moves the existing generations of `path` one place back, so that `path` is free for a new
// newest one, keeping `generations` - 1 of them; the oldest beyond that are removed. Gaps (a
// crash between two renames, a file removed by hand) close up on the way.
void make_room_for_generation(const std::string& path, int generations) {
  namespace fs = std::filesystem;
  std::vector<std::pair<int, std::string>> found = existing_generations(path);
  struct Move {
    std::string from, to;
  };
  std::vector<Move> moves;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const int target = static_cast<int>(i) + 1;
    if (target >= generations) {
      fs::remove(found[i].second);
    } else if (target != found[i].first) {
      moves.push_back({found[i].second, checkpoint_generation(path, target)});
    }
  }
  // Every target is distinct and each file keeps its place in the order, so a move whose target
  // is free always exists until all are done: never overwrite a generation still to move.
  // The newest stays where it is, linked as generation 1 too, until the new one replaces it by a
  // rename: should that fail, `path` still holds the newest checkpoint.
  const bool newest = !found.empty() && found.front().first == 0;
  if (newest && !moves.empty() && moves.front().from == path) moves.erase(moves.begin());
  while (!moves.empty()) {
    const auto ready =
        std::find_if(moves.begin(), moves.end(), [](const Move& m) { return !fs::exists(m.to); });
    SEEDRL_REQUIRE(ready != moves.end(), path, ": cannot move its older checkpoints back (",
                   moves.front().to, " is in the way)");
    fs::rename(ready->from, ready->to);
    moves.erase(ready);
  }
  if (!newest || generations <= 1) return;
  std::error_code error;
  fs::create_hard_link(path, checkpoint_generation(path, 1), error);
  if (error) fs::copy_file(path, checkpoint_generation(path, 1));  // no hard links here
}

// FNV-1a, 64 bits. Not a CRC: a replay state ends with its own CRC-32C, and the CRC of any data
// followed by its CRC is one constant, whatever the data.
std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

ReplayLink link_replay(const std::string& path, std::string_view replay) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a64(replay)));
  ReplayLink link;
  link.hash = hash;
  link.name = replay_prefix(path) + link.hash + ".seedrl";
  link.path = (fs::path(path).parent_path() / link.name).string();
  return link;
}

bool is_replay_name(std::string_view name) {
  constexpr std::string_view kMiddle = ".replay.", kSuffix = ".seedrl";
  const std::size_t middle = name.rfind(kMiddle);
  if (middle == std::string_view::npos || middle == 0 || name.front() == '.' ||
      name.size() != middle + kMiddle.size() + 16 + kSuffix.size() || !name.ends_with(kSuffix))
    return false;
  auto in = [](std::string_view text, auto allowed) {
    return std::all_of(text.begin(), text.end(), allowed);
  };
  return in(name.substr(0, middle),
            [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '-' || c == '.';
            }) &&
         in(name.substr(middle + kMiddle.size(), 16),
            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

void remove_unlinked_replays(const std::string& path) {
  std::set<std::string> named;
  bool every_generation_linked = true;
  for (const auto& [n, generation] : existing_generations(path)) {
    try {
      const Metadata metadata = SafetensorsFile::read_metadata(generation);
      if (std::optional<std::string> name = named_replay(metadata, path)) {
        named.insert(*name);
      } else {
        every_generation_linked = false;
      }
    } catch (const std::exception&) {
      // A generation whose header does not read cannot load either: it keeps nothing alive.
    }
  }
  const fs::path directory =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    const bool unlinked =
        (name.starts_with(replay_prefix(path)) && is_replay_name(name) && !named.contains(name)) ||
        (name == kLegacyReplay && every_generation_linked);
    if (unlinked) fs::remove(entry.path(), error);
  }
}

std::string checkpoint_generation(const std::string& path, int n) {
  SEEDRL_REQUIRE(n >= 0, "checkpoint_generation: generation ", n, " must be >= 0");
  if (n == 0) return path;
  const std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + std::to_string(n) + p.extension().string()))
      .string();
}

std::vector<std::string> checkpoint_generations(const std::string& path) {
  std::vector<std::string> paths;
  for (auto& [n, name] : existing_generations(path)) paths.push_back(std::move(name));
  return paths;
}

LoadedGeneration load_newest_generation(
    const std::string& path, const std::function<CheckpointCounters(const std::string&)>& load) {
  LoadedGeneration point;
  std::vector<std::string> faults;
  for (const std::string& generation : checkpoint_generations(path)) {
    try {
      point.counters = load(generation);
    } catch (const std::exception& e) {
      // Errors name the file already, as a rule; say it once.
      const std::string what = e.what();
      faults.push_back(what.starts_with(generation) ? what : generation + ": " + what);
      continue;
    }
    point.path = generation;
    for (const std::string& fault : faults)
      point.notes.push_back("warning: skipped a newer checkpoint that does not load: " + fault);
    if (!point.counters->checksummed)
      point.notes.push_back("warning: " + generation +
                            " carries no checksums (written before seedrl recorded them): its "
                            "data could not be verified");
    return point;
  }
  if (faults.empty()) return point;
  std::string message = "no checkpoint of " + path + " loads (newest first):";
  for (const std::string& fault : faults) message += "\n  " + fault;
  fail(message);
}

std::optional<std::string> read_replay_of(const SafetensorsFile& file) {
  const std::string& path = file.source();
  const fs::path directory = fs::path(path).parent_path();
  const std::optional<std::string> name = named_replay(file.metadata(), path);
  if (!name) {
    const std::string legacy = (directory / kLegacyReplay).string();
    if (!fs::exists(legacy)) return std::nullopt;
    return read_file(legacy);
  }
  const std::string replay_path = (directory / *name).string();
  SEEDRL_REQUIRE(fs::exists(replay_path), path, ": its replay ", replay_path,
                 " is missing (a checkpoint and its replay load together)");
  std::string replay = read_file(replay_path);
  // The hash is in the checkpoint's metadata and in the replay's name (a generation moved back
  // keeps the name it was written with): both must be the replay's.
  const auto recorded = file.metadata().find(std::string(kReplayHashKey));
  const std::string computed = link_replay(path, replay).hash;
  SEEDRL_REQUIRE(recorded != file.metadata().end() && recorded->second == computed &&
                     name->find(".replay." + computed + ".") != std::string::npos,
                 path, ": its replay ", replay_path, " fails its checksum (FNV-1a ",
                 recorded == file.metadata().end() ? std::string("none") : recorded->second,
                 " recorded, ", computed, " computed): the file is corrupt");
  return replay;
}

}  // namespace seedrl::io
