// Writing files so that a failure never leaves a half-written one: write to a
// temporary file beside the target, flush, then rename over it.
#pragma once

#include <string>

namespace attntrace {

// Throws InputError naming the path when it cannot be written.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace attntrace
