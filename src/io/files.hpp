// Writing an output so that a failure never leaves a half-written file. What
// happens depends on what the target is (io/targets.hpp):
// - nothing, or a regular file: text goes to a temporary file beside it
//   (".NAME.tmp-PID-XXXXXX"), which replaces the target only once it is whole
//   and on disk; until then the previous file is untouched (an error, an
//   exception, Ctrl-C or a kill leaves it as it was). A replaced file keeps its
//   permissions (and, where allowed, its owner); a new one gets 0666 & ~umask.
// - a symbolic link: followed to the end of its chain, and that file written
//   as above, so the link stays a link.
// - anything else that exists (a character device as /dev/null, a FIFO, a
//   socket, /dev/stdout and the other links on /proc to an open file): it
//   cannot be replaced, so it is written in place as the text comes, and a
//   failed write (/dev/full) is an InputError naming it. Nothing is renamed.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "io/text_sink.hpp"

namespace attntrace {

// One file being written. commit() makes it the target; destroying an
// uncommitted AtomicFile removes the temporary file. Any failure throws
// InputError naming `shown` (by default the path: a file written inside a
// temporary folder names the file the user will see instead).
class AtomicFile final : public TextSink {
public:
    explicit AtomicFile(std::string path, std::string shown = "");
    ~AtomicFile() override;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::string_view text) override;
    // The temporary whole and on disk (its mode set, fsync, closed), the
    // target not yet changed; in place: closed. Called by commit() when not yet.
    void prepare();
    void commit();  // prepare, then rename over the target (in place: close)
    const std::string& temp_path() const { return temp_; }  // empty when written in place

    // For several outputs replaced together (io/outputs.hpp): commit, keeping
    // the replaced file aside (a hard link ".NAME.old-PID-XXXXXX") until
    // finish(), so that undo() can put it back if a later output fails. A new
    // file is removed by undo(); one written in place cannot be undone.
    void commit_undoable();
    void undo();
    void finish();

private:
    void open_in_place();
    void discard();
    [[noreturn]] void fail(const char* expected, int err);
    std::string shown_, target_, temp_;  // target_: where the text goes, links followed
    std::string aside_;                  // commit_undoable: the replaced file, until finish()
    int fd_ = -1;
    int slot_ = -1;          // the signal handlers' slot naming temp_ (-1: none)
    bool prepared_ = false;  // temp_ whole and closed
    bool committed_ = false;
    bool replacing_ = false;  // a regular file is replaced: the new one gets its mode and owner
    mode_t mode_ = 0;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
};

void write_file_atomic(const std::string& path, const std::string& content, const std::string& shown = "");

// SIGINT, SIGTERM and SIGHUP remove the temporary files being written (if
// any; several when a command prepares several outputs) before the process
// dies of the signal, so an interrupted run leaves
// neither a partial target nor litter. (SIGKILL cannot be caught: after it,
// the target is still intact but a .tmp- file may remain.) Called by main.
void remove_partial_files_on_signals();

}  // namespace attntrace
