// Fuzz target: an article read for its numbers (draft/article.hpp), in each
// of its formats. Bytes in; the only acceptable outcomes are an Article or an
// InputError. An article that reads must read the same twice, and hold what
// the format promises: every array has numbers; an array not elided is
// rectangular and its shape's cells are its numbers; no number is a NaN; a
// place has a line; a quote stays within its bound; every quote, name, label
// and token is valid UTF-8 (a lesson will write them as JSON).
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "draft/article.hpp"
#include "draft/scan.hpp"
#include "fuzz/fuzz_limits.hpp"

namespace {

void check(const attntrace::Article& a) {
    using namespace attntrace;
    for (const PrintedArray& x : a.arrays) {
        if (x.rows.empty() || x.count() == 0) __builtin_trap();
        if (x.place.line == 0) __builtin_trap();
        if (x.quote.size() > kQuoteBytes + 8) __builtin_trap();
        // what a lesson will quote, name and label is valid UTF-8, as JSON must be
        if (valid_utf8(x.quote) != x.quote || valid_utf8(x.name) != x.name) __builtin_trap();
        for (const auto& l : x.row_labels)
            if (valid_utf8(l) != l) __builtin_trap();
        for (const auto& l : x.col_labels)
            if (valid_utf8(l) != l) __builtin_trap();
        for (const auto& r : x.rows)
            for (const auto& n : r)
                if (std::isnan(n.value)) __builtin_trap();
        if (x.elided || x.form == PrintedForm::prose) continue;
        std::size_t cells = 1;
        for (std::size_t d : x.shape) cells *= d;
        if (cells != x.count()) __builtin_trap();
        if (!x.row_labels.empty() && x.row_labels.size() != x.rows.size()) __builtin_trap();
    }
}

void check_tokens(const attntrace::Article& a) {
    for (const auto& t : a.tokens)
        for (const auto& w : t.words)
            if (w.empty() || attntrace::valid_utf8(w) != w) __builtin_trap();
}

bool same(const attntrace::Article& a, const attntrace::Article& b) {
    if (a.arrays.size() != b.arrays.size() || a.tokens.size() != b.tokens.size()) return false;
    for (std::size_t i = 0; i < a.arrays.size(); ++i) {
        const auto &x = a.arrays[i], &y = b.arrays[i];
        if (x.rows != y.rows || x.name != y.name || x.row_labels != y.row_labels || x.quote != y.quote) return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* format : {"markdown", "html", "notebook", "latex", "text"}) {
        try {
            const Article a = read_article_text(text, "fuzz.md", format);
            check(a);
            check_tokens(a);
            if (!same(a, read_article_text(text, "fuzz.md", format))) __builtin_trap();
        } catch (const InputError&) {
        }
    }
    return 0;
}
