// Writing files so that a failure never leaves a half-written one: text goes
// to a temporary file beside the target (".NAME.tmp-XXXXXX"), which replaces
// the target only once it is whole and on disk. Until then the previous file
// is untouched: an error, an exception, Ctrl-C or a kill leaves it as it was.
#pragma once

#include <string>
#include <string_view>

#include "trace/json_text.hpp"

namespace attntrace {

// One file being written. commit() makes it the target; destroying an
// uncommitted AtomicFile removes the temporary file. Any failure throws
// InputError naming the target path.
class AtomicFile final : public TextSink {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile() override;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::string_view text) override;
    void commit();  // fsync, then rename over the target
    const std::string& temp_path() const { return temp_; }

private:
    void discard();
    std::string path_, temp_;
    int fd_ = -1;
};

void write_file_atomic(const std::string& path, const std::string& content);

// SIGINT, SIGTERM and SIGHUP remove the temporary file being written (if
// any) before the process dies of the signal, so an interrupted run leaves
// neither a partial target nor litter. (SIGKILL cannot be caught: after it,
// the target is still intact but a .tmp- file may remain.) Called by main.
void remove_partial_files_on_signals();

}  // namespace attntrace
