#include "core/error.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"

namespace attntrace {

namespace {

// The line of `f`, from its outermost file on or (with_file false) after it.
std::string format_line(const ErrorFields& f, bool with_file) {
    std::string line;
    auto add = [&](const std::string& part) {
        if (!part.empty()) line += (line.empty() ? "" : ": ") + part;
    };
    for (std::size_t i = 0; i < f.within.size(); ++i) {
        if (i > 0 || with_file) add(f.within[i].file);
        add(f.within[i].path);
    }
    if (!f.within.empty() || with_file) add(f.file);
    add(f.path);
    if (f.byte) add(fmt::format("byte {}", *f.byte));
    if (f.expected.empty() && f.found.empty()) add(f.text);
    else add(fmt::format("expected {}, found {}", f.expected, f.found));
    return printable(line);  // one line, whatever a file name, an argument or a JSON key holds
}

// (Built member by member: GCC warns of every member a designated initializer leaves out.)
ErrorFields at_file(const std::string& file, const std::string& expected, const std::string& found) {
    ErrorFields f;
    f.file = file;
    f.expected = expected;
    f.found = found;
    return f;
}

ErrorFields text_fields(const std::string& text) {
    ErrorFields f;
    f.text = text;
    return f;
}

}  // namespace

InputError::InputError(ErrorFields fields) : std::runtime_error(format_line(fields, true)), f_(std::move(fields)) {}

InputError::InputError(const std::string& text) : InputError(text_fields(text)) {}

InputError InputError::within(const std::string& file, const std::string& path) const {
    ErrorFields f = f_;
    f.within.insert(f.within.begin(), ErrorPlace{file, path});
    return InputError(std::move(f));
}

std::string InputError::after_file() const { return format_line(f_, false); }

void fail_field(const std::string& file, const std::string& path, const std::string& expected,
                const std::string& found, ErrorKind kind) {
    ErrorFields f = at_file(file, expected, found);
    f.path = path;
    f.kind = kind;
    throw InputError(std::move(f));
}

void fail_file(const std::string& file, const std::string& expected, const std::string& found) {
    throw InputError(at_file(file, expected, found));
}

void fail_at(const std::string& file, std::size_t byte, const std::string& expected, const std::string& found) {
    ErrorFields f = at_file(file, expected, found);
    f.byte = byte;
    throw InputError(std::move(f));
}

void fail_file(const std::string& file, const std::string& message) {
    ErrorFields f = text_fields(message);
    f.file = file;
    throw InputError(std::move(f));
}

}  // namespace attntrace
