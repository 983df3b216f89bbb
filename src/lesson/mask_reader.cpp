// config.mask -> MaskKind and MaskSpec, every mistake named by its path.
#include "lesson/mask_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "lesson/config_fields.hpp"

namespace attntrace {

namespace {

// Window sizes beyond twice the longest sequence change nothing; the bound
// keeps p ± w in range of every integer type used.
constexpr std::int64_t kMaxWindow = std::int64_t{1} << 30;

// Positions given as token indices or token strings (each string naming exactly
// one token), sorted, each at most once.
std::vector<std::size_t> positions(const Fields& f, const json& v, const std::string& path,
                                   const std::vector<std::string>& tokens) {
    if (!v.is_array()) f.fail(path, "an array of token indices or token strings", describe(v));
    const std::size_t T = tokens.size();
    std::vector<std::size_t> out;
    for (std::size_t n = 0; n < v.size(); ++n) {
        const std::string p = index(path, n);
        const json& e = v[n];
        std::size_t pos = 0;
        if (e.is_string()) {
            const std::string s = e.get<std::string>();
            const auto count = std::count(tokens.begin(), tokens.end(), s);
            if (count != 1)
                f.fail(p, "a token string naming exactly one of the lesson's tokens (else give its index)",
                       count == 0 ? describe(e) + ", which is not a token"
                                  : fmt::format("{}, which is {} tokens", describe(e), count));
            pos = static_cast<std::size_t>(std::find(tokens.begin(), tokens.end(), s) - tokens.begin());
        } else {
            if (!e.is_number_integer() && !e.is_number_unsigned())
                f.fail(p, fmt::format("a token index 0..{} or a token string", T - 1), describe(e));
            pos = static_cast<std::size_t>(f.integer(e, p, 0, static_cast<std::int64_t>(T) - 1));
        }
        if (std::find(out.begin(), out.end(), pos) != out.end())
            f.fail(p, "each position once", fmt::format("position {} (\"{}\") a second time", pos, tokens[pos]));
        out.push_back(pos);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::size_t window_size(const Fields& f, const json& obj, const std::string& path, bool symmetric) {
    const std::string p = join(path, "window");
    const auto w = static_cast<std::size_t>(f.integer(f.member(obj, path, "window"), p, 1, kMaxWindow));
    if (symmetric && w % 2 == 0)
        f.fail(p,
               "an odd window for a symmetric window (w keys centred on the query: (w-1)/2 each side; an even w has "
               "no centre, so which side gets the extra key would be a guess; use w - 1 or w + 1, or \"causal\": true)",
               fmt::format("{}", w));
    return w;
}

// custom: (Tq, T) of 0/1 or true/false.
std::vector<std::uint8_t> allowed_cells(const Fields& f, const json& v, const std::string& path, std::size_t Tq,
                                        std::size_t T) {
    const std::string shape = fmt::format("a {}x{} array (queries x tokens) of 0/1 or true/false", Tq, T);
    if (!v.is_array()) f.fail(path, shape, describe(v));
    if (v.size() != Tq) f.fail(path, shape, fmt::format("{} rows", v.size()));
    std::vector<std::uint8_t> out(Tq * T);
    for (std::size_t i = 0; i < Tq; ++i) {
        const json& row = v[i];
        const std::string rp = index(path, i);
        if (!row.is_array()) f.fail(rp, fmt::format("a row of {} cells (0/1 or true/false)", T), describe(row));
        if (row.size() != T) f.fail(rp, fmt::format("a row of {} cells, one per token", T), fmt::format("{}", row.size()));
        for (std::size_t j = 0; j < T; ++j) {
            const json& c = row[j];
            if (c.is_boolean()) out[i * T + j] = c.get<bool>() ? 1 : 0;
            else if ((c.is_number_integer() || c.is_number_unsigned()) && (c == 0 || c == 1)) out[i * T + j] = c == 1;
            else f.fail(index(rp, j), "0, 1, true or false (1: query may see key)", describe(c));
        }
    }
    return out;
}

}  // namespace

void read_mask(const Fields& f, const json& v, const std::vector<std::string>& tokens, std::size_t queries,
               Config& cfg) {
    const std::string path = "config.mask";
    const char* expected = "\"none\", \"causal\" or an object with a \"kind\" (window, global_local, block_sparse, "
                           "padding or custom)";
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        // a string names a kind without fields: "none" or "causal" (config_fields.cpp's spellings)
        const auto k = spelling_value(mask_kinds(), s);
        if (k && (*k == static_cast<int>(MaskKind::none) || *k == static_cast<int>(MaskKind::causal)))
            cfg.mask = static_cast<MaskKind>(*k);
        else f.fail(path, expected, describe(v));
        return;
    }
    if (!v.is_object()) f.fail(path, expected, describe(v));
    const std::string kind = f.string(f.member(v, path, "kind"), join(path, "kind"));
    MaskSpec& m = cfg.mask_spec;
    if (kind == "window") {
        f.only_keys(v, path, {"kind", "window", "causal"});
        cfg.mask = MaskKind::window;
        if (auto* c = f.optional(v, "causal")) m.causal = f.boolean(*c, join(path, "causal"));
        m.window = window_size(f, v, path, !m.causal);
    } else if (kind == "global_local") {
        f.only_keys(v, path, {"kind", "window", "global"});
        cfg.mask = MaskKind::global_local;
        m.window = window_size(f, v, path, true);
        m.global = positions(f, f.member(v, path, "global"), join(path, "global"), tokens);
    } else if (kind == "block_sparse") {
        f.only_keys(v, path, {"kind", "block", "summary"});
        cfg.mask = MaskKind::block_sparse;
        m.block = static_cast<std::size_t>(
            f.integer(f.member(v, path, "block"), join(path, "block"), 1, static_cast<std::int64_t>(tokens.size())));
        if (auto* s = f.optional(v, "summary")) {
            const auto which = f.string(*s, join(path, "summary"));
            if (which != "first" && which != "last")
                f.fail(join(path, "summary"), "\"first\" or \"last\" (which token of a block summarises it)", describe(*s));
            m.summary_last = which == "last";
        }
    } else if (kind == "padding") {
        f.only_keys(v, path, {"kind", "pad", "pad_token", "causal"});
        cfg.mask = MaskKind::padding;
        const json* pad = f.optional(v, "pad");
        const json* pad_token = f.optional(v, "pad_token");
        if ((pad != nullptr) == (pad_token != nullptr))
            f.fail(path, "either \"pad\" (positions) or \"pad_token\" (a token string)", pad ? "both" : "neither");
        if (pad) {
            m.pad = positions(f, *pad, join(path, "pad"), tokens);
        } else {
            const std::string t = f.string(*pad_token, join(path, "pad_token"));
            for (std::size_t j = 0; j < tokens.size(); ++j)
                if (tokens[j] == t) m.pad.push_back(j);
        }
        if (auto* c = f.optional(v, "causal")) m.causal = f.boolean(*c, join(path, "causal"));
    } else if (kind == "custom") {
        f.only_keys(v, path, {"kind", "allowed"});
        cfg.mask = MaskKind::custom;
        m.allowed = allowed_cells(f, f.member(v, path, "allowed"), join(path, "allowed"), queries, tokens.size());
    } else {
        f.fail(join(path, "kind"), "\"window\", \"global_local\", \"block_sparse\", \"padding\" or \"custom\"",
               describe(v["kind"]));
    }
}

}  // namespace attntrace
