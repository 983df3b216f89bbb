// The outputs of one command, replaced together: a command that fails changes
// none of them. Each output is prepared first (a file written whole to its
// temporary and synced, a folder filled beside its target); only when every
// one is ready are they put in place, in order, by renames. When putting one
// in place fails, those already in place are put back as they were (the
// replaced file or folder was kept aside until then).
//
// Outputs written in place as the text comes (a device, a FIFO, /dev/stdout:
// io/files.hpp) cannot be taken back; a command prepares them last, so that
// every other output is ready before the first byte goes out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/files.hpp"
#include "io/folder_swap.hpp"

namespace attntrace {

class Outputs {
public:
    Outputs() = default;
    ~Outputs();
    Outputs(const Outputs&) = delete;
    Outputs& operator=(const Outputs&) = delete;

    // A file to write into now; it replaces `path` at commit().
    AtomicFile& file(const std::string& path, const std::string& shown = "");
    // A folder to fill now (its temp()); it replaces `target` at commit().
    FolderWrite& folder(const std::string& target, const FolderSwap& swap);

    // Prepares every file, then puts each output in place in the order it
    // was added. A failure puts back the ones before it and throws; the
    // destructor removes every temporary of an output not committed.
    void commit();

private:
    struct Output {
        std::unique_ptr<AtomicFile> file;
        std::unique_ptr<FolderWrite> folder;
    };
    std::vector<Output> outputs_;
};

}  // namespace attntrace
