// tokenizer.json's normalizer: the section read with field paths, the forms computed by utf8proc.
#include "model/normalizer.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"
#include "core/json_field.hpp"

namespace attntrace {

namespace {

constexpr const char* kKnown = "\"NFC\", \"NFD\", \"NFKC\", \"NFKD\", \"Lowercase\" or a \"Sequence\" of them";

utf8proc_option_t options(TextNormalizer::Step s) {
    using S = TextNormalizer::Step;
    int o = UTF8PROC_STABLE;
    if (s == S::nfc) o |= UTF8PROC_COMPOSE;
    if (s == S::nfd) o |= UTF8PROC_DECOMPOSE;
    if (s == S::nfkc) o |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    if (s == S::nfkd) o |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    return static_cast<utf8proc_option_t>(o);
}

}  // namespace

// utf8proc_decompose with no buffer gives the length the form needs, so a
// text that would grow past kMaxNormalizedChars is refused before anything
// of that size is allocated.
std::string unicode_form(const std::string& s, TextNormalizer::Step step, const std::string& source) {
    const auto* in = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
    const auto len = static_cast<utf8proc_ssize_t>(s.size());
    const utf8proc_option_t opt = options(step);
    const utf8proc_ssize_t need = utf8proc_decompose(in, len, nullptr, 0, opt);
    if (need < 0) throw std::logic_error(std::string("utf8proc: ") + utf8proc_errmsg(need));  // valid UTF-8 was checked
    if (static_cast<std::size_t>(need) > kMaxNormalizedChars)
        fail_file(source, fmt::format("a text of at most {} characters once normalized", kMaxNormalizedChars),
                  fmt::format("{} characters", need));
    // utf8proc_reencode writes UTF-8 into the same buffer: 4 bytes a character suffice.
    std::unique_ptr<utf8proc_int32_t[]> buf(new utf8proc_int32_t[static_cast<std::size_t>(need) + 1]);
    const utf8proc_ssize_t n = utf8proc_decompose(in, len, buf.get(), need, opt);
    if (n < 0) throw std::logic_error(std::string("utf8proc: ") + utf8proc_errmsg(n));
    const utf8proc_ssize_t bytes = utf8proc_reencode(buf.get(), n, opt);
    if (bytes < 0) throw std::logic_error(std::string("utf8proc: ") + utf8proc_errmsg(bytes));
    return std::string(reinterpret_cast<const char*>(buf.get()), static_cast<std::size_t>(bytes));
}

// utf8proc's simple mapping, and the one unconditional mapping to two
// characters in SpecialCasing.txt, İ (U+0130) -> i + U+0307. No context
// (Greek's final sigma is not applied, as Rust's per-character mapping does
// not; JavaScript's toLowerCase does).
std::string lowercase_chars(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
    utf8proc_uint8_t buf[4];
    auto put = [&](utf8proc_int32_t cp) {
        const auto k = utf8proc_encode_char(cp, buf);
        out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(k));
    };
    for (std::size_t i = 0; i < s.size();) {
        utf8proc_int32_t cp = 0;
        const auto n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(s.size() - i), &cp);
        if (n <= 0) throw std::logic_error("Lowercase: invalid UTF-8 past the check");
        if (cp == 0x130) {
            put('i');
            put(0x307);
        } else {
            put(utf8proc_tolower(cp));
        }
        i += static_cast<std::size_t>(n);
    }
    return out;
}

namespace {

void read_one(const nlohmann::json& n, const Fields& f, const std::string& path, bool nested,
              std::vector<TextNormalizer::Step>& steps) {
    using S = TextNormalizer::Step;
    f.object(n, path);
    const std::string type = f.string(f.member(n, path, "type"), join(path, "type"));
    if (type == "NFC") steps.push_back(S::nfc);
    else if (type == "NFD") steps.push_back(S::nfd);
    else if (type == "NFKC") steps.push_back(S::nfkc);
    else if (type == "NFKD") steps.push_back(S::nfkd);
    else if (type == "Lowercase") steps.push_back(S::lowercase);
    else if (type == "Sequence" && !nested) {
        const std::string lp = join(path, "normalizers");
        const nlohmann::json& list = f.member(n, path, "normalizers");
        if (!list.is_array()) f.fail(lp, fmt::format("an array of normalizers ({})", kKnown), describe(list));
        if (list.size() > 16) f.fail(lp, "at most 16 normalizers", fmt::format("{}", list.size()));
        for (std::size_t i = 0; i < list.size(); ++i) read_one(list[i], f, index(lp, i), true, steps);
    } else {
        f.fail(join(path, "type"),
               fmt::format("null or a normalizer byte-level BPE computes: {}{}", kKnown,
                           nested ? " (a Sequence within a Sequence is not read)" : ""),
               describe(n["type"]));
    }
}

}  // namespace

TextNormalizer TextNormalizer::read(const nlohmann::json& n, const Fields& f, const std::string& path) {
    TextNormalizer out;
    if (!n.is_null()) read_one(n, f, path, false, out.steps_);
    return out;
}

std::string TextNormalizer::apply(const std::string& text, const std::string& source) const {
    std::string s = text;
    for (const Step step : steps_) s = step == Step::lowercase ? lowercase_chars(s) : unicode_form(s, step, source);
    return s;
}

TokenSpan NormalizedText::span(std::size_t a, std::size_t b) const {
    if (identity) return {offset + a, offset + b};
    // the run holding byte a, and the one holding byte b - 1 (a run that gave no bytes holds none)
    auto run_of = [&](std::size_t byte) {
        return static_cast<std::size_t>(std::upper_bound(norm.begin(), norm.end(), byte) - norm.begin()) - 1;
    };
    return {orig[run_of(a)], orig[run_of(b - 1) + 1]};
}

NormalizedText normalize_aligned(const std::string& original, std::size_t offset,
                                 const std::function<std::string(const std::string&)>& normalize) {
    NormalizedText n;
    n.offset = offset;
    if (!normalize) {
        n.text = original;
        n.identity = true;
        return n;
    }
    n.text = normalize(original);
    // the runs: a character of combining class 0 starts one
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(original.data());
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < original.size();) {
        utf8proc_int32_t cp = 0;
        const auto len = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(original.size() - i), &cp);
        if (len <= 0) throw std::logic_error("normalize_aligned: invalid UTF-8 past the check");
        if (starts.empty() || utf8proc_get_property(cp)->combining_class == 0) starts.push_back(i);
        i += static_cast<std::size_t>(len);
    }
    starts.push_back(original.size());
    // Runs normalized alone; a run whose normalization is not what the whole text has there (a composition
    // across runs: Hangul's leading consonant and vowel under NFC) is joined to the runs after it until it is,
    // at most kMaxJoinedRuns of them.
    constexpr std::size_t kMaxJoinedRuns = 32;
    std::string joined;
    n.norm.push_back(0);
    n.orig.push_back(offset);
    // whether `part` is what the whole text has where the runs before it end
    auto in_place = [&](const std::string& part) {
        return joined.size() <= n.text.size() && n.text.compare(joined.size(), part.size(), part) == 0;
    };
    for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
        const std::size_t first = k;
        std::string part = normalize(original.substr(starts[k], starts[k + 1] - starts[k]));
        while (!in_place(part) && k + 2 < starts.size() && k - first < kMaxJoinedRuns) {
            ++k;
            part = normalize(original.substr(starts[first], starts[k + 1] - starts[first]));
        }
        joined += part;
        n.norm.push_back(joined.size());
        n.orig.push_back(offset + starts[k + 1]);
    }
    if (joined != n.text) {  // the runs do not normalize alone: one run
        n.norm = {0, n.text.size()};
        n.orig = {offset, offset + original.size()};
    }
    return n;
}

}  // namespace attntrace
