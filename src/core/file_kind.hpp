// What a path is when it is not a regular file, for the refusal of an input
// that must be one. Such a path is refused from its type, before it is
// opened: opening a FIFO for reading waits for a writer (forever, when none
// comes), and a device or /proc file has no size to read up to.
#pragma once

#include <filesystem>
#include <string>

namespace attntrace {

// "" for a regular file; otherwise what it is, as an error's "found" says it:
// "a directory", "a FIFO (named pipe)", "a socket", "a character device",
// "a block device", "no such file", "an unknown kind of file".
std::string non_regular_kind(std::filesystem::file_type type);

}  // namespace attntrace
