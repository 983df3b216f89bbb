// InputError: everything a user can get wrong (lesson files, flags, traces,
// output paths) is reported as one of these: one line, naming the file, the
// field path or byte offset, what was expected and what was found. The CLI
// prints it and exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace attntrace {

class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// "FILE: PATH: expected EXPECTED, found FOUND"
[[noreturn]] void fail_field(const std::string& file, const std::string& path,
                             const std::string& expected, const std::string& found);

// "FILE: MESSAGE" (message already says what was expected and found)
[[noreturn]] void fail_file(const std::string& file, const std::string& message);

}  // namespace attntrace
