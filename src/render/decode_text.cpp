#include "render/decode_text.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"
#include "render/matrix.hpp"
#include "render/text.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// One head's row, after its label ("      k ["): "0.1234, -0.5678]" and what
// follows, wrapped at the numbers under the first one.
std::string row(std::string_view label, const float* x, std::size_t n, int precision, std::size_t width,
                std::string_view after = "") {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += fmt::format("{}{:.{}f}", i ? ", " : "", x[i], precision);
    return wrap_hanging(out + "]" + std::string(after), width, label);
}

std::string verdict_line(const DecodeReport& r) {
    return fmt::format("{} steps through {}, each equal to its row of the causal run within {:g} of each step's scale "
                       "(max |Δ| {:.2g}); the causal run's weights after each token are exactly 0",
                       r.steps.size(), r.through, kDecodeTol, r.max_dev);
}

}  // namespace

void render_decode(std::ostream& out, const Lesson& lesson, const DecodeReport& r, int precision, std::size_t width) {
    // The lesson's id and tokens, printable (core/printable.hpp).
    out << wrap_text(fmt::format("attntrace · {} — decoding with a KV cache, one token at a time", printable(lesson.id)),
                     width, "", "    ");
    if (!r.applicable) {
        out << wrap_hanging(printable(r.why_not), width, "not applicable: ");
        return;
    }
    out << wrap_text("Each step projects the new token alone, appends its k and v to the cache, and attends from its "
                     "query over the cache. Nothing is masked: the cache holds only the past.",
                     width, "", "");
    for (const DecodeStep& s : r.steps) {
        // hv: the value heads' width (config.d_v; = hs unless the lesson sets it)
        const std::size_t NH = s.q.shape[0], hs = s.q.shape[1], hv = s.v.shape[1], KVH = s.k.shape[0], n = s.t + 1;
        out << "\n"
            << wrap_text(hv == hs ? fmt::format("t = {} \"{}\"  cache: {} token{} (K and V: {} x {} x {} each)", s.t,
                                                printable(s.token), n, n == 1 ? "" : "s", n, KVH, hs)
                                  : fmt::format("t = {} \"{}\"  cache: {} token{} (K: {} x {} x {}, V: {} x {} x {})", s.t,
                                                printable(s.token), n, n == 1 ? "" : "s", n, KVH, hs, n, KVH, hv),
                         width, "", "    ");
        for (std::size_t h = 0; h < NH; ++h) {
            const std::size_t g = h / (NH / KVH);
            out << row(fmt::format("  h{}  q [", h), s.q.ptr() + h * hs, hs, precision, width);
            if (h % (NH / KVH) == 0) {
                out << row("      k [", s.k.ptr() + g * hs, hs, precision, width,
                           fmt::format("  (appended to K cache head {})", g));
                out << row("      v [", s.v.ptr() + g * hv, hv, precision, width);
            }
            std::string weights;  // each key's token and weight one word for the wrapping
            for (std::size_t j = 0; j < n; ++j)
                weights += (j ? "  " : "") + unbroken(fmt::format("{} {:.{}f}", printable(lesson.tokens[j]),
                                                                  s.pattern.data[h * n + j], precision));
            out << wrap_hanging(weights, width, "      weights  ");
            out << row("      z [", s.z.ptr() + h * hv, hv, precision, width);
        }
        out << wrap_text(fmt::format("vs row \"{}\" of the causal run: {}  {}  {}  {}{}", printable(s.token),
                                     unbroken(fmt::format("max |Δ| k,v {:.2g}", s.dev_k)),
                                     unbroken(fmt::format("weights {:.2g}", s.dev_pattern)),
                                     unbroken(fmt::format("z {:.2g}", s.dev_z)),
                                     unbroken(fmt::format("other rows {:.2g}", s.dev_rows)),
                                     s.future_weight == 0
                                         ? ""
                                         : fmt::format("  WEIGHT {:.3g} ON A LATER TOKEN", s.future_weight)),
                         width, "  ", "    ");
    }
    out << "\n"
        << wrap_text(fmt::format("{}: {}.", r.matches() ? "matches" : "DOES NOT MATCH", verdict_line(r)), width, "", "");
    if (r.attentions > 1)
        out << wrap_text(fmt::format("The rows shown are block 0's self-attention; every attention of the model ({} in all, "
                                     "one cache each) and every row after it were decoded and compared the same way.",
                                     r.attentions),
                         width, "", "");
    out << wrap_text(fmt::format("The caches end with {} floats (T x KVH x (hs + hv) per self-attention; a "
                                 "cross-attention's hold the memory's, projected once): each step reuses the past keys "
                                 "and values instead of projecting every token again.",
                                 r.cache_floats),
                     width, "", "");
}

void render_decode_check(std::ostream& out, const DecodeReport& r, std::size_t width) {
    if (!r.applicable) return;
    out << check_row(fmt::format("  {} {:<18} {:<20} ", r.matches() ? "✓" : "✗", "kv-cache decode",  // the claims' columns
                                 r.matches() ? "matches" : "DOES NOT MATCH"),
                     verdict_line(r), width);
}

OrderedJson decode_json(const Lesson& lesson, const DecodeReport& r, bool with_values) {
    OrderedJson j;
    j["format"] = "attntrace-decode";
    j["version"] = 1;
    j["lesson"] = lesson.id;
    j["applicable"] = r.applicable;
    if (!r.applicable) {
        j["why_not"] = r.why_not;
        return j;
    }
    j["tolerance"] = kDecodeTol;
    j["matches"] = r.matches();
    j["max_deviation"] = r.max_dev;
    j["cache_floats"] = r.cache_floats;
    j["attentions"] = r.attentions;
    j["through"] = r.through;
    if (!with_values) return j;
    OrderedJson steps = OrderedJson::array();
    for (const DecodeStep& s : r.steps) {
        OrderedJson e;
        e["t"] = s.t;
        e["token"] = s.token;
        e["q"] = tensor_to_json(s.q);
        e["k"] = tensor_to_json(s.k);
        e["v"] = tensor_to_json(s.v);
        e["scores"] = tensor_to_json(s.scores);
        e["pattern"] = tensor_to_json(s.pattern);
        e["z"] = tensor_to_json(s.z);
        e["deviation"] = {{"k_v", s.dev_k}, {"pattern", s.dev_pattern}, {"z", s.dev_z}, {"rows", s.dev_rows}};
        e["future_weight"] = s.future_weight;
        steps.push_back(std::move(e));
    }
    j["steps"] = std::move(steps);
    return j;
}

}  // namespace attntrace
