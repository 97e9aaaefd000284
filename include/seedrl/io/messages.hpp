// Where a run's messages go. The library never writes to the host's console by itself: a run
// (TrainingSessionOptions::messages) hands its lines to a sink the host chooses, which may be
// nothing (silent), its own logger, or the console sink below (what the examples use).
//
//   info      a line about the run: what runs ("run: agent=vtrace ..."), a resume
//   progress  the live figures, at every report
//   done      the last progress line of the run; the console ends its live line here
//
// A sink is called from the thread that runs the session (TrainingSession::run), one call at a
// time.
#pragma once

#include <functional>
#include <string_view>

namespace seedrl::io {

enum class MessageKind { info, progress, done };

using MessageSink = std::function<void(MessageKind, std::string_view)>;

/// The console: every line on stderr. On a terminal the progress is one live line rewritten in
/// place; otherwise a progress line is printed at most every `plain_progress_seconds` (the done
/// line always).
MessageSink console_sink(double plain_progress_seconds = 10.0);

}  // namespace seedrl::io
