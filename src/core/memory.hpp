// The memory budget a run may use, checked before anything is allocated.
#pragma once

#include <cstddef>
#include <string>

namespace attntrace {

// The program, its libraries and thread stacks, resident before a command
// holds anything of its own: measured ~11 MiB RSS for the default lesson
// (`/usr/bin/time -v attntrace`); rounded up. A run's plan counts it; a JSON
// file's pre-check (kJsonBytesPerTextByte) does not, so that a small budget
// still reaches the refusals it is there to test.
inline constexpr std::size_t kBaselineBytes = std::size_t{16} << 20;

// --max-memory (set_max_memory), else $ATTNTRACE_MAX_MEMORY ("512M", "8G",
// or bytes), else half the machine's
// physical memory: room for the trace and the OS, and a clear refusal instead
// of the OOM killer. Throws InputError on a malformed value.
std::size_t max_memory_bytes();
void set_max_memory(std::size_t bytes);

// "512M", "8G", "1048576" -> bytes; InputError naming `origin` otherwise.
std::size_t parse_size(const std::string& text, const std::string& origin);

// "1.5 GiB", "312 KiB"
std::string human_bytes(std::size_t bytes);

}  // namespace attntrace
