#include "io/outputs.hpp"

namespace attntrace {

Outputs::~Outputs() {
    // Newest first: an output's temporaries go before those of outputs it may sit in.
    while (!outputs_.empty()) outputs_.pop_back();
}

AtomicFile& Outputs::file(const std::string& path, const std::string& shown) {
    outputs_.push_back({std::make_unique<AtomicFile>(path, shown), nullptr});
    return *outputs_.back().file;
}

FolderWrite& Outputs::folder(const std::string& target, const FolderSwap& swap) {
    outputs_.push_back({nullptr, std::make_unique<FolderWrite>(target, swap)});
    return *outputs_.back().folder;
}

void Outputs::commit() {
    // 1. Every file whole and on disk (a full disk or a write error shows here), nothing in place yet.
    for (auto& o : outputs_)
        if (o.file) o.file->prepare();
    // 2. Each put in place; on a failure, those before it put back, newest first.
    std::size_t done = 0;
    try {
        for (; done < outputs_.size(); ++done) {
            if (outputs_[done].file) outputs_[done].file->commit_undoable();
            else outputs_[done].folder->commit();
        }
    } catch (...) {
        while (done-- > 0) {
            if (outputs_[done].file) outputs_[done].file->undo();
            else outputs_[done].folder->undo();
        }
        throw;
    }
    // 3. What they replaced, dropped.
    for (auto& o : outputs_) {
        if (o.file) o.file->finish();
        else o.folder->finish();
    }
}

}  // namespace attntrace
