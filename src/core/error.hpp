// InputError: everything a user can get wrong (lesson files, flags, traces,
// output paths) is reported as one of these: one line, naming the file, the
// field path or byte offset, what was expected and what was found. The CLI
// prints it and exits with status 2.
//
// An error is a value: those parts are fields, and the line (what()) is
// formatted from them. Code that needs to know what went wrong (compare
// mapping a refusal to its --set, a cost claim quoting the cost model's
// complaint, a lesson naming the .npy file it read) reads the fields, never
// the message, so a message can be reworded without breaking a caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attntrace {

// What kind of wrong, for the callers that branch on it; most are `invalid`.
enum class ErrorKind : std::uint8_t {
    invalid,        // a value that is there but wrong
    missing_field,  // a required field is absent
    unknown_field,  // a key the format does not have
    unknown_step,   // a name that is no step of the catalogue
};

// A file and a field in it that led to the input where the error is: the
// lesson field weights.W_Q naming the .npy file that is wrong.
struct ErrorPlace {
    std::string file;
    std::string path;
    bool operator==(const ErrorPlace&) const = default;
};

struct ErrorFields {
    ErrorKind kind = ErrorKind::invalid;
    std::vector<ErrorPlace> within;    // outermost first; empty unless another input led here
    std::string file;                  // the file, or the flag, variable or command the input came from
    std::string path;                  // field path in it ("weights.W_Q[2]"); "" when none applies
    std::optional<std::size_t> byte;   // byte offset in it, where it is read as bytes (.npy, JSON syntax)
    std::string expected, found;       // both "" only for a free-text error
    std::string text;                  // free text instead of expected/found, for throw sites whose line has another shape
};

class InputError : public std::runtime_error {
public:
    // what(): the non-empty parts of, in order, each `within` place (file,
    // path), file, path, "byte N", then "expected E, found F" (or `text`),
    // joined by ": ", through printable() (core/printable.hpp): one line with
    // control characters and invalid UTF-8 escaped ("\n", "\x1b"):
    //   "FILE: PATH: expected E, found F"
    //   "LESSON: weights.W_Q: W_Q.npy: byte 20: expected E, found F"
    explicit InputError(ErrorFields fields);
    // Free text only ("explain: ..."); its fields are empty but for `text`.
    explicit InputError(const std::string& text);

    const ErrorFields& fields() const noexcept { return f_; }
    const std::string& file() const noexcept { return f_.file; }
    const std::string& path() const noexcept { return f_.path; }
    const std::string& expected() const noexcept { return f_.expected; }
    const std::string& found() const noexcept { return f_.found; }
    ErrorKind kind() const noexcept { return f_.kind; }

    // This error, met while reading `file` at `path` for another input: the
    // same fields with (file, path) as the new outermost place.
    InputError within(const std::string& file, const std::string& path) const;
    // The line without its outermost file: "config.heads: expected ..., found 3".
    std::string after_file() const;

private:
    ErrorFields f_;
};

// "FILE: PATH: expected EXPECTED, found FOUND" (PATH left out when empty)
[[noreturn]] void fail_field(const std::string& file, const std::string& path, const std::string& expected,
                             const std::string& found, ErrorKind kind = ErrorKind::invalid);

// "FILE: expected EXPECTED, found FOUND": the file (or flag) as a whole
[[noreturn]] void fail_file(const std::string& file, const std::string& expected, const std::string& found);

// "FILE: byte N: expected EXPECTED, found FOUND"
[[noreturn]] void fail_at(const std::string& file, std::size_t byte, const std::string& expected,
                          const std::string& found);

// "FILE: MESSAGE": free text, for lines of another shape ("found: <system error>")
[[noreturn]] void fail_file(const std::string& file, const std::string& message);

}  // namespace attntrace
