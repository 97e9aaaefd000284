// Writing files so that readers never see a torn version and a crash never loses the old one:
// the new contents go to a temporary file beside the target (a unique name, created exclusively,
// never through a symbolic link, readable by its owner only by default), are flushed to disk, and
// then replace the target by a rename (atomic on POSIX file systems), whose directory is flushed
// too.
//
//   write_file_atomically(path, bytes)          one file
//   PendingFile a(p, x), b(q, y); ...; a.commit(); b.commit();   several, renamed when all are
//                                                                 on disk (checkpoint + replay)
//
// Faults are errors that name the file and the system's reason ("No space left on device"); the
// target is then left as it was and the temporary removed. Tests make writes fail on purpose
// through set_write_fault_hook (a full disk at every writer).
//
// Thread-safety: the functions may be called from any thread; a PendingFile belongs to one.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

namespace seedrl {

/// A test's stand-in for a failing disk: called before every write, flush and rename of a file
/// seedrl writes for a run (checkpoints, replay state, run_info.json, metrics.csv, TensorBoard
/// events), with the file's path and the operation ("create", "write", "sync", "rename"); a
/// non-zero result is the errno that operation then fails with, as the disk would. Null (the
/// default): none. Process-wide; set it while no file is being written.
using WriteFaultHook = int (*)(const std::string& path, std::string_view operation);
void set_write_fault_hook(WriteFaultHook hook);
/// The hook's answer for `path` and `operation`, or 0 without a hook.
int injected_write_fault(const std::string& path, std::string_view operation);

/// Writes all of `data` to the open file `fd` (retrying interrupted and partial writes). Returns 0,
/// or the errno of the write that failed (ENOSPC, EIO, ...). `path` names the file for the
/// write-fault hook.
int write_fully(int fd, std::string_view data, const std::string& path);

/// Creates directory `path` and its missing parents with mode 0700 (readable by the owner only);
/// directories that exist keep their mode. Throws seedrl::Error naming the path.
void create_private_directories(const std::string& path);

/// Flushes the directory that holds `path` to disk, so that a file created or renamed in it
/// survives a crash. Returns 0 or the errno.
int sync_parent_directory(const std::string& path);

/// The new contents of a file, on disk beside it, until commit() puts them in its place.
class PendingFile {
 public:
  /// Writes `contents` to a new temporary file beside `path` ("<path>.tmp.<pid>.<random>") with
  /// `mode`, flushed to disk. Throws seedrl::Error naming the temporary and the reason; then
  /// nothing is left behind.
  PendingFile(std::string path, std::string_view contents, mode_t mode = 0600);
  /// Removes the temporary file unless commit() has moved it.
  ~PendingFile();
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  /// Renames the temporary file over the target and flushes the directory. Throws naming both
  /// (the target is then as it was, or, when only the directory's flush failed, already new).
  void commit();
  /// Whether the new contents have replaced the target (also when commit() then failed to flush
  /// the directory).
  bool committed() const { return committed_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_, temporary_;
  bool committed_ = false;
};

/// Whether `name` (a file name, without a directory) is the name of a PendingFile's temporary:
/// what an interrupted run leaves behind (TrainingSession removes them from its logdir).
bool is_pending_file_name(std::string_view name);

/// Replaces `path` with `contents` atomically (see the top). `before_replace`, when given, runs
/// once the new contents are on disk, just before they replace `path` (e.g. to move the previous
/// file aside); if it throws, `path` is left as it was. Throws seedrl::Error naming the path and
/// the reason.
void write_file_atomically(const std::string& path, std::string_view contents,
                           const std::function<void()>& before_replace = {}, mode_t mode = 0600);

}  // namespace seedrl
