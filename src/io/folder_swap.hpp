// Writing a whole folder so that a failure never leaves a half-written one
// (the folder counterpart of AtomicFile, io/files.hpp): everything goes into
// a fresh sibling ".NAME.tmp-PID-XXXXXX", which is swapped into place only
// once it is complete. Until then the previous folder is untouched. A target
// that is a symbolic link is followed: the folder it ends at is replaced (the
// sibling is made beside that folder) and the link stays a link. The folder
// put in place has the mode an ordinary mkdir gives (0777 less the umask).
#pragma once

#include <functional>
#include <string>

namespace attntrace {

struct FolderSwap {
    // Whether an existing, non-empty folder at the target may be replaced
    // (e.g. it is a previous output of the same kind); `what` says what such
    // a folder is, for the refusal ("a previous attntrace npy export").
    std::function<bool(const std::string& folder)> replaceable;
    std::string what;
};

// Creates the temporary folder, calls fill(temp_folder), then puts it at
// `target`: renamed there when `target` does not exist or is an empty folder;
// exchanged with it (then the old one removed) when `target` is a folder
// `swap.replaceable` accepts. Anything else at `target` (a file, a folder of
// other things) is refused before fill runs, with an InputError naming
// `target`, and left as it is. What is there when the new folder goes in
// decides, not what was there when the run began: when two writers race to a
// new folder, the later one replaces the earlier one's (whole) folder, as it
// would a previous export. When fill or the swap fails, the temporary folder
// is removed and the error passed on. A kill (SIGKILL, or a signal during
// fill) may leave the temporary folder behind, never a partial target; the
// next write to the target removes it (io/targets.hpp).
//
// check_folder_target: the refusal write_folder_atomic would give, on its
// own, so that a command can refuse before it does any work. Returns whether
// `target` would be replaced.
bool check_folder_target(const std::string& target, const FolderSwap& swap);

void write_folder_atomic(const std::string& target, const FolderSwap& swap,
                         const std::function<void(const std::string& temp_folder)>& fill);

// write_folder_atomic in its steps, for several outputs replaced together
// (io/outputs.hpp): the constructor refuses the target as check_folder_target
// does and makes the temporary folder; the caller fills temp(); commit() puts
// it in place, keeping a replaced folder (now at temp()) until finish(), so
// that undo() can put it back. Destroyed uncommitted, or after undo(), the
// temporary folder is removed.
class FolderWrite {
public:
    FolderWrite(std::string target, FolderSwap swap);
    ~FolderWrite();
    FolderWrite(const FolderWrite&) = delete;
    FolderWrite& operator=(const FolderWrite&) = delete;

    const std::string& temp() const { return temp_; }
    void commit();
    void undo();
    void finish();

private:
    std::string target_, real_, temp_;
    FolderSwap swap_;
    bool committed_ = false;
    bool replaced_ = false;   // a previous folder was exchanged out: it is at temp_
    bool was_empty_ = false;  // an empty folder was at the target (rename took its place)
};

}  // namespace attntrace
