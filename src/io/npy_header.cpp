#include "io/npy_header.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace attntrace {

namespace {

// The header's dict literal, parsed by hand: numpy writes
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, and any
// other spacing or quoting Python's literal_eval accepts for these keys.
class HeaderParser {
public:
    HeaderParser(const std::string& text, std::size_t base, const std::string& file)
        : t_(text), base_(base), file_(file) {}

    NpyHeader parse() {
        ws();
        expect('{', "'{' (the header is a Python dict)");
        bool seen[3] = {false, false, false};
        for (;;) {
            ws();
            if (peek('}')) break;
            const std::size_t key_at = at();
            const std::string key = string_lit();
            int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
            if (k < 0) fail_at(key_at, "one of the keys 'descr', 'fortran_order', 'shape'", "'" + key + "'");
            if (seen[k]) fail_at(key_at, "each key once", "'" + key + "' a second time");
            seen[k] = true;
            ws();
            expect(':', "':'");
            ws();
            if (k == 0) h_.descr_at = at(), h_.descr = string_lit();
            else if (k == 1) h_.fortran_at = at(), h_.fortran = boolean();
            else h_.shape_at = at(), h_.shape = tuple();
            ws();
            if (peek(',')) ++i_;
            else if (!peek('}')) fail("',' or '}'", found());
        }
        const std::size_t end = at();  // the '}'
        ++i_;
        for (int k = 0; k < 3; ++k)
            if (!seen[k])
                fail_at(end, "the keys 'descr', 'fortran_order' and 'shape'",
                        fmt::format("no '{}'", k == 0 ? "descr" : k == 1 ? "fortran_order" : "shape"));
        for (; i_ < t_.size(); ++i_)
            if (t_[i_] != ' ' && t_[i_] != '\n' && t_[i_] != '\t' && t_[i_] != '\r')
                fail("only spaces and a newline after the dict", found());
        return h_;
    }

private:
    const std::string& t_;
    std::size_t base_;
    const std::string& file_;
    std::size_t i_ = 0;
    NpyHeader h_;

    std::size_t at() const { return base_ + i_; }
    [[noreturn]] void fail_at(std::size_t offset, const std::string& expected, const std::string& found) const {
        attntrace::fail_at(file_, offset, expected, found);
    }
    [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
        fail_at(at(), expected, found);
    }
    std::string found() const {
        if (i_ >= t_.size()) return "the end of the header";
        std::string s = t_.substr(i_, 12);
        return "\"" + s + (t_.size() - i_ > 12 ? "...\"" : "\"");
    }
    bool peek(char c) const { return i_ < t_.size() && t_[i_] == c; }
    void expect(char c, const char* what) {
        if (!peek(c)) fail(what, found());
        ++i_;
    }
    void ws() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
    }
    std::string string_lit() {
        if (!peek('\'') && !peek('"')) fail("a quoted string", found());
        const char q = t_[i_++];
        const std::size_t start = i_;
        while (i_ < t_.size() && t_[i_] != q) {
            if (t_[i_] == '\\') fail("a string without escapes", found());
            ++i_;
        }
        if (i_ >= t_.size()) fail_at(base_ + start - 1, "a closed string", "one left open");
        return t_.substr(start, i_++ - start);
    }
    bool boolean() {
        if (t_.compare(i_, 4, "True") == 0) return i_ += 4, true;
        if (t_.compare(i_, 5, "False") == 0) return i_ += 5, false;
        fail("True or False", found());
    }
    // (), (3,), (3, 4): sizes from 1 to kMaxElements each.
    Shape tuple() {
        expect('(', "a tuple of sizes such as (3, 4)");
        Shape s;
        for (;;) {
            ws();
            if (peek(')')) break;
            const std::size_t num_at = i_;
            std::size_t v = 0;
            if (i_ >= t_.size() || t_[i_] < '0' || t_[i_] > '9') fail("a size (a whole number) or ')'", found());
            while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') {
                v = v * 10 + static_cast<std::size_t>(t_[i_++] - '0');
                if (v > kMaxElements)
                    fail_at(base_ + num_at, fmt::format("a size of at most {}", kMaxElements), "a larger one");
            }
            if (v == 0) fail_at(base_ + num_at, "a size of at least 1", "0 (an empty array)");
            s.push_back(v);
            ws();
            if (peek(',')) ++i_;
            else if (!peek(')')) fail("',' or ')'", found());
        }
        ++i_;
        return s;
    }
};

}  // namespace

NpyHeader parse_npy_header(const std::string& text, std::size_t base, const std::string& file) {
    return HeaderParser(text, base, file).parse();
}

std::string npy_shape_repr(const Shape& s) {
    if (s.empty()) return "()";
    if (s.size() == 1) return fmt::format("({},)", s[0]);
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
    return out + ")";
}

}  // namespace attntrace
