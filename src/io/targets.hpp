// What an output path names, and the temporaries written beside it. Shared by
// AtomicFile (io/files.hpp) and the folder swap (io/folder_swap.hpp), so a file
// and a folder target follow links and clean up after a killed writer alike.
#pragma once

#include <string>

namespace attntrace {

// The path a write to `path` must replace so that a symbolic link stays a
// link: `path` itself, or the end of its chain of links (which need not exist
// yet: a dangling link is written through, as a shell's `> link` does). A link on
// /proc (as /dev/stdout -> /proc/self/fd/1) is not followed: it stands for an
// open file, not for a place to rename into; it is returned as is, still a
// link, for the caller to write in place. A loop throws InputError naming `shown`.
std::string follow_links(const std::string& path, const std::string& shown);

// Whether `path` is a link follow_links stopped at: one on /proc.
bool is_proc_link(const std::string& path);

// The mkstemp/mkdtemp template of a temporary beside `target`:
// "DIR/.NAME.KIND-PID-XXXXXX" (KIND "tmp", or "old" for a folder set aside).
// The writer's pid in the name lets a later write tell a temporary whose
// writer died (kill -9, a crash, a power cut) from one being written now.
std::string temp_template(const std::string& target, const char* kind);

// Removes the temporaries of our naming beside `target` that no writer will
// finish: those whose writer's pid is not running on this machine, and any
// untouched for kStaleAge (the pid was reused; or the name has no pid, as the
// temporaries of earlier versions, ".NAME.tmp-XXXXXX"). Best effort: a
// failure to remove one is ignored, never fails the write. A writer in another
// pid namespace sharing the folder looks dead here: its rename then fails and
// it reports the error (exit 2); the target is never left partial.
void remove_stale_temps(const std::string& target);

// A running writer changes its temporary file (or adds a file to its folder)
// within seconds: a day without a change means nobody is writing it. (A run
// stopped for a day, then resumed, finds its temporary gone and fails with
// exit 2, its target whole.)
inline constexpr long kStaleAgeSeconds = 24 * 60 * 60;

}  // namespace attntrace
