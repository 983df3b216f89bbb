#include "draft/masks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "draft/chain.hpp"
#include "trace/derived.hpp"
#include "trace/trace.hpp"

namespace attntrace {

namespace {

// A sentence's row and the list of its tokens, or a stated window size, are one passage: at most this many lines apart.
constexpr std::size_t kRowTokensNear = 40;
// A mask drawn among an example's numbers: at most this many arrays after its start (draft.cpp's window).
constexpr std::size_t kDrawnMaskNear = 48;
// A blocked cell as code writes it: -inf, or -1e9 and the like (exp of it is 0 in any float).
constexpr double kHugeNegative = -1e8;

std::string lowered(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A token the words call a pad ("<pad>", "[PAD]", "PAD", "pad").
bool pad_token(const std::string& t) {
    std::string b;
    for (char c : lowered(t))
        if (std::isalnum(static_cast<unsigned char>(c))) b += c;
    return b == "pad" || b == "padding";
}

bool step_leaf_is_mask(const std::string& name) {
    const std::string tail = "attn.hook_mask";
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

OrderedJson mask_object(std::initializer_list<std::pair<const char*, OrderedJson>> fields) {
    OrderedJson o = OrderedJson::object();
    for (const auto& [k, v] : fields) o[k] = v;
    return o;
}

}  // namespace

bool prints_mask(const PrintedArray& a) {
    if (!a.legend.empty()) return true;
    if (a.rows.empty() || a.rows[0].size() < 2) return false;
    bool blocked = false;
    for (const auto& r : a.rows)
        for (const auto& n : r) {
            if (n.value < kHugeNegative) blocked = true;
            else if (n.value != 0) return false;
        }
    return blocked;
}

std::vector<std::size_t> rows_by_label(const PrintedArray& a, const std::vector<std::string>& tokens) {
    if (a.row_labels.size() != a.rows.size()) return {};
    // each label's tokens in order; the k-th row of a label is the k-th token of it
    std::map<std::string, std::vector<std::size_t>> at;
    for (std::size_t t = 0; t < tokens.size(); ++t) at[tokens[t]].push_back(t);
    std::map<std::string, std::size_t> taken;
    std::vector<std::size_t> out;
    for (const std::string& label : a.row_labels) {
        const auto it = at.find(label);
        std::size_t& k = taken[label];
        if (it == at.end() || k >= it->second.size()) return {};
        out.push_back(it->second[k++]);
    }
    return out;
}

bool keyed_row(const PrintedArray& a) {
    return a.rows.size() == 1 && a.row_labels.size() == 1 && a.col_labels.size() == a.rows[0].size() && !a.legend.empty() &&
           a.form == PrintedForm::bracket;
}

std::vector<std::string> row_tokens(const Article& art, const PrintedArray& a, std::size_t& array, std::string& from) {
    array = std::numeric_limits<std::size_t>::max();
    std::vector<std::string> names = a.col_labels;
    names.push_back(a.row_labels[0]);
    auto names_all = [&](const std::vector<std::string>& words) {
        return std::all_of(names.begin(), names.end(), [&](const std::string& n) { return std::find(words.begin(), words.end(), n) != words.end(); });
    };
    std::vector<std::string> best;
    std::size_t best_line = 0;
    for (const auto& t : art.tokens)
        if (t.place.line <= a.place.line && a.place.line - t.place.line <= kRowTokensNear && t.place.line >= best_line && names_all(t.words))
            best = t.words, best_line = t.place.line, from = "the list at " + t.place.describe();
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const PrintedArray& l = art.arrays[i];
        if (l.form == PrintedForm::prose || l.rows.size() != 1 || l.rows[0].size() < 2 || l.place.line > a.place.line ||
            a.place.line - l.place.line > kRowTokensNear || l.place.line < best_line)
            continue;
        std::vector<std::string> words;
        for (const auto& n : l.rows[0])
            if (n.decimals == 0 && std::fabs(n.value) < 1e6 && n.value == std::floor(n.value)) words.push_back(fmt::format("{}", n.value));
        if (words.size() != l.rows[0].size() || !names_all(words)) continue;
        best = std::move(words), best_line = l.place.line, array = i, from = "the list at " + l.place.describe();
    }
    return best;
}

std::optional<PrintedArray> expand_row(const PrintedArray& a, const std::vector<std::string>& tokens) {
    PrintedArray row = a;
    row.col_labels = tokens;
    row.rows = {std::vector<PrintedNumber>(tokens.size(), PrintedNumber{-HUGE_VAL, 0})};
    for (std::size_t k = 0; k < a.col_labels.size(); ++k) {
        const auto it = std::find(tokens.begin(), tokens.end(), a.col_labels[k]);
        if (it == tokens.end()) return std::nullopt;
        row.rows[0][static_cast<std::size_t>(it - tokens.begin())] = a.rows[0][k];
    }
    row.shape = {tokens.size()};
    return row;
}

std::size_t stated_window(const Article& art, const PrintedArray& a) {
    std::size_t w = 0;
    for (const auto& s : art.settings)
        if (s.name == "window" && s.place.line <= a.place.line && a.place.line - s.place.line <= kRowTokensNear) w = static_cast<std::size_t>(s.value);
    return w;
}

std::vector<std::pair<std::string, std::string>> mask_hints(const PrintedArray& a) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string& c = a.context;
    auto named = [&](const char* kind, std::initializer_list<const char*> words) {
        for (const char* w : words)
            if (c.find(w) != std::string::npos) return out.push_back({kind, w});
    };
    named("causal", {"causal", "look-ahead", "lookahead", "future", "previous", "autoregressive", "earlier"});
    named("window", {"window", "neighbo", "nearby", "local"});
    named("global_local", {"global"});
    named("block_sparse", {"block"});
    named("padding", {"pad"});
    return out;
}

std::vector<Conventions> mask_conventions(const Article& art, const Start& s) {
    const std::size_t T = s.tokens.size();
    const PrintedArray& a = s.drawn ? *s.drawn : art.arrays[s.inputs[0]];
    auto with = [](std::string describe, OrderedJson mask) {
        Conventions c;
        c.mask = std::move(describe);
        c.mask_json = std::move(mask);
        return c;
    };
    // each kind at every size that draws a mask of its own on T tokens
    std::vector<std::pair<std::string, std::vector<Conventions>>> kinds;
    kinds.push_back({"none", {with("none", "none")}});
    kinds.push_back({"causal", {with("causal", "causal")}});
    // a window size the text states is the window: the drawing is checked against it, not fitted
    const std::size_t stated = stated_window(art, a);
    auto allowed = [&](std::size_t w) { return stated == 0 || w == stated; };
    std::vector<Conventions> window;
    for (std::size_t w = 3; w + 1 < 2 * T; w += 2)
        if (allowed(w)) window.push_back(with(fmt::format("window {}", w), mask_object({{"kind", "window"}, {"window", w}})));
    for (std::size_t w = 1; w < T; ++w)
        if (allowed(w))
            window.push_back(with(fmt::format("causal window {}", w), mask_object({{"kind", "window"}, {"window", w}, {"causal", true}})));
    kinds.push_back({"window", std::move(window)});
    // the global tokens: those the legend calls global
    std::vector<std::size_t> global;
    for (std::size_t t = 0; t < T; ++t)
        if (std::find(a.global_labels.begin(), a.global_labels.end(), s.tokens[t]) != a.global_labels.end()) global.push_back(t);
    std::vector<Conventions> gl;
    if (!global.empty())
        for (std::size_t w = 1; w + 1 < 2 * T; w += 2)
            if (allowed(w)) gl.push_back(with(fmt::format("global_local window {}, global {}", w, json(global).dump()),
                              mask_object({{"kind", "global_local"}, {"window", w}, {"global", global}})));
    kinds.push_back({"global_local", std::move(gl)});
    std::vector<Conventions> blocks;
    for (std::size_t b = 2; b < T; ++b)
        for (const char* summary : {"first", "last"})
            blocks.push_back(with(fmt::format("block_sparse block {}, summary {}", b, summary),
                                  mask_object({{"kind", "block_sparse"}, {"block", b}, {"summary", summary}})));
    kinds.push_back({"block_sparse", std::move(blocks)});
    std::vector<Conventions> pads;
    if (std::any_of(s.tokens.begin(), s.tokens.end(), pad_token)) {
        // the tokens called pad, by string when one spelling names them all
        std::string spelling;
        for (const auto& t : s.tokens)
            if (pad_token(t)) spelling = t;
        for (bool causal : {false, true}) {
            OrderedJson m = mask_object({{"kind", "padding"}, {"pad_token", spelling}});
            if (causal) m["causal"] = true;
            pads.push_back(with(fmt::format("padding of {}{}", spelling, causal ? ", causal" : ""), std::move(m)));
        }
    }
    kinds.push_back({"padding", std::move(pads)});
    // the kinds the words name first: on a tie, they win
    std::vector<Conventions> out;
    std::vector<bool> done(kinds.size(), false);
    for (const auto& [kind, word] : mask_hints(a))
        for (std::size_t k = 0; k < kinds.size(); ++k)
            if (!done[k] && kinds[k].first == kind) {
                for (auto& c : kinds[k].second) out.push_back(c), out.back().hint = word;
                done[k] = true;
            }
    for (std::size_t k = 0; k < kinds.size(); ++k)
        if (!done[k]) out.insert(out.end(), kinds[k].second.begin(), kinds[k].second.end());
    return out;
}

std::vector<Placement> place_mask_rows(const PrintedArray& a, const Trace& trace, const std::vector<std::size_t>& rows) {
    std::vector<Placement> out;
    for (std::size_t r = 0; r < a.rows.size() && r < rows.size(); ++r) {
        PrintedArray row = a;
        row.rows = {a.rows[r]};
        row.shape = {a.rows[r].size()};
        row.row_labels.clear();
        Placement best;
        for (const Step& st : trace.steps) {
            if (step_leaf_is_mask(st.name) && st.shape.size() == 2 && rows[r] < st.shape[0] && st.shape[1] == a.rows[r].size()) {
                const StepValues v = values_of(trace, st);
                const float* x = v->ptr() + rows[r] * st.shape[1];
                Placement p;
                p.step = st.name;
                p.at = json{{"query", rows[r]}};
                p.col_axis = st.axes.size() == 2 ? st.axes[1] : "key";
                for (std::size_t j = 0; j < a.rows[r].size(); ++j) {
                    ++p.total;
                    p.agree += agrees_at_precision(x[j], static_cast<float>(a.rows[r][j].value), a.rows[r][j].decimals);
                    p.computed.push_back(x[j]);
                }
                best = std::move(p);
                break;
            }
        }
        out.push_back(std::move(best));
    }
    return out;
}

// A printed mask against a lesson's mask: whole, or a row per label (the drawing of a few queries' rows).
Scored score_mask(const OrderedJson& lesson, const PrintedArray& a) {
    Scored sc;
    std::unique_ptr<Evaluation> e;
    try {
        e = run_lesson(lesson);
    } catch (const InputError& err) {
        sc.error = err.after_file();
        return sc;
    }
    sc.ran = true;
    const auto tokens = lesson["tokens"].get<std::vector<std::string>>();
    const std::vector<std::size_t> rows = rows_by_label(a, tokens);
    bool identity = a.rows.size() == tokens.size();
    for (std::size_t r = 0; r < rows.size(); ++r) identity = identity && rows[r] == r;
    if (!identity && !rows.empty()) {
        Placement sum;
        for (const Placement& p : place_mask_rows(a, e->exact, rows)) sum.agree += p.agree, sum.total += p.total;
        sc.agree = sum.agree, sc.total = sum.total;
        sc.placements.push_back(Placement{});  // claimed a row at a time
        return sc;
    }
    Placement p = place_array(a, e->exact, "attn.hook_mask");
    sc.agree = p.agree, sc.total = p.total;
    sc.placements.push_back(std::move(p));
    return sc;
}

std::optional<Conventions> drawn_mask(const Article& art, const Start& s) {
    if (s.kind == StartKind::mask || s.kind == StartKind::weights || !s.query_tokens.empty()) return std::nullopt;
    const std::size_t first = s.first(), T = s.tokens.size();
    for (std::size_t i = first + 1; i < art.arrays.size() && i <= first + kDrawnMaskNear; ++i) {
        const PrintedArray& a = art.arrays[i];
        if (a.form == PrintedForm::prose || !prints_mask(a) || keyed_row(a) || a.rows.empty() || a.rows[0].size() != T) continue;
        Start m;
        m.kind = StartKind::mask;
        m.inputs = {i};
        m.tokens = s.tokens;
        m.d_model = 2;
        std::optional<Conventions> best;
        std::size_t best_agree = 0, causal_agree = 0;
        for (const Conventions& c : mask_conventions(art, m)) {
            const Scored sc = score_mask(base_lesson(art, m, c), a);
            if (c.mask == "causal") causal_agree = sc.agree;
            if (sc.ran && (!best || sc.agree > best_agree)) best = c, best_agree = sc.agree;
        }
        // none and causal are tried anyway: another kind only when it draws this mask better
        if (!best || best->mask == "none" || best->mask == "causal" || best_agree <= causal_agree) return std::nullopt;
        best->hint = "the mask drawn at " + a.place.describe();
        return best;
    }
    return std::nullopt;
}

}  // namespace attntrace
