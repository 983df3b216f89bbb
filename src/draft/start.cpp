#include "draft/start.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "draft/masks.hpp"
#include "draft/place.hpp"

namespace attntrace {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// A mask drawn for a reader is a few tokens wide; the search runs a lesson per size of each kind, so a wider
// printed mask (a dump) starts no example.
constexpr std::size_t kMaxMaskTokens = 64;
// Q, K and V of one example are printed close together: a K or V further than this many arrays after its Q is another's.
constexpr std::size_t kTripleSpan = 6;

bool rectangular(const PrintedArray& a) {
    if (a.rows.empty() || a.elided) return false;
    for (const auto& r : a.rows)
        if (r.size() != a.rows[0].size() || r.empty()) return false;
    return true;
}

OrderedJson number_json(double v) {
    if (std::isinf(v)) return v < 0 ? OrderedJson("-inf") : OrderedJson("inf");
    return v;
}

bool labelled(const std::vector<std::string>& labels, std::size_t n) {
    return labels.size() == n && std::none_of(labels.begin(), labels.end(), [](const std::string& l) { return l.empty(); });
}

// Every number 0, or 0 and -inf (or huge negatives): a mask, printed to show which keys a query sees.
bool mask_like(const PrintedArray& a) {
    for (const auto& r : a.rows)
        for (const auto& n : r)
            if (n.value != 0 && !(n.value < -1e8) && n.value != 1) return false;
    return true;
}

// A name an article gives a row of scores or weights ("Example row", "logits", "attention"), not a vector's (x_ring).
bool names_scores(const std::string& name) {
    std::string n;
    for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* w : {"score", "row", "logit", "example", "attention", "weight", "similarit"})
        if (n.find(w) != std::string::npos) return true;
    return false;
}

// The token lists the article gives: quoted lists and sentences, and tables' row labels.
struct TokenCandidate {
    std::vector<std::string> words;
    std::string from;
    std::size_t line = 0;
};

std::vector<TokenCandidate> token_candidates(const Article& art) {
    std::vector<TokenCandidate> out;
    for (const auto& t : art.tokens)
        out.push_back({t.words, (t.sentence ? "the sentence at " : "the list at ") + t.place.describe(), t.place.line});
    // labels that number one stem (e1 e2 e3, dim 0, dim 1) name dimensions, not tokens
    auto numbered = [](const std::vector<std::string>& labels) {
        std::string stem0;
        for (std::size_t i = 0; i < labels.size(); ++i) {
            const std::string& l = labels[i];
            std::size_t d = l.size();
            while (d > 0 && std::isdigit(static_cast<unsigned char>(l[d - 1]))) --d;
            if (d == l.size() || (i > 0 && l.substr(0, d) != stem0)) return false;
            stem0 = l.substr(0, d);
        }
        return true;
    };
    for (const auto& a : art.arrays) {
        if (!is_table(a)) continue;
        if (a.row_labels.size() >= 2 && labelled(a.row_labels, a.row_labels.size()) && !numbered(a.row_labels))
            out.push_back({a.row_labels, "the row labels at " + a.place.describe(), a.place.line});
        // a token per column under a header of words, beside rows numbering dimensions (| e1 | 1.0 | 0.2 |)
        if (a.col_labels.size() >= 2 && labelled(a.col_labels, a.col_labels.size()) && numbered(a.row_labels) && !numbered(a.col_labels))
            out.push_back({a.col_labels, "the column labels at " + a.place.describe(), a.place.line});
    }
    // by line, so that a start looks only at the lists near it (a long article stays linear)
    std::stable_sort(out.begin(), out.end(), [](const TokenCandidate& a, const TokenCandidate& b) { return a.line < b.line; });
    return out;
}

// The tokens of an example of n keys starting at array `at`: its own labels, else the nearest list of n words
// given before it (after it, when none is), else t1 ... tn.
// `cands`: token_candidates(art), by line.
std::vector<std::string> tokens_for(const std::vector<TokenCandidate>& cands, const PrintedArray& a, std::size_t n,
                                    std::string& from) {
    if (a.rows.size() == n && labelled(a.row_labels, n)) return from = "its row labels", a.row_labels;
    if (labelled(a.col_labels, n)) return from = "its column labels", a.col_labels;
    // a list this many lines from the array is another passage's
    constexpr std::size_t kTokensNear = 40;
    const std::size_t lo = a.place.line > kTokensNear ? a.place.line - kTokensNear : 0;
    const auto first = std::lower_bound(cands.begin(), cands.end(), lo,
                                        [](const TokenCandidate& c, std::size_t line) { return c.line < line; });
    const TokenCandidate* best = nullptr;
    for (auto it = first; it != cands.end() && it->line <= a.place.line + kTokensNear; ++it) {
        const TokenCandidate& c = *it;
        if (c.words.size() != n || (c.line > a.place.line ? c.line - a.place.line : a.place.line - c.line) > kTokensNear) continue;
        const bool before = c.line <= a.place.line;
        const bool best_before = best && best->line <= a.place.line;
        if (!best || (before && (!best_before || c.line > best->line)) || (!before && !best_before && c.line < best->line)) best = &c;
    }
    if (best) return from = best->from, best->words;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(fmt::format("t{}", i + 1));
    from = "none printed: t1 ...";
    return out;
}

// The lesson weight a name gives a block's later weight ("W^O" W_O, "W_1", "b_2", "\gamma", "γ_2" ln2_gamma), or "".
std::string later_role(const std::string& name) {
    std::string n;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const std::string_view rest = std::string_view(name).substr(i);
        if (rest.rfind("\xCE\xB3", 0) == 0) n += "gamma", ++i;  // γ
        else if (rest.rfind("\xCE\xB2", 0) == 0) n += "beta", ++i;  // β
        else if (std::isalnum(static_cast<unsigned char>(name[i]))) n += static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
    }
    if (n == "bq") return "b_Q";
    if (n == "bk") return "b_K";
    if (n == "bv") return "b_V";
    if (n == "wo") return "W_O";
    if (n == "bo") return "b_O";
    if (n == "w1") return "W_1";
    if (n == "b1") return "b_1";
    if (n == "w2") return "W_2";
    if (n == "b2") return "b_2";
    if (n == "gamma" || n == "gamma1") return "ln1_gamma";
    if (n == "beta" || n == "beta1") return "ln1_beta";
    if (n == "gamma2") return "ln2_gamma";
    if (n == "beta2") return "ln2_beta";
    return "";
}

// The block's later weights printed by name after X, each the first of its name with the shape its role takes:
// W^O heads·d_k x d_model; W_1 d_model x d_ff, W_2 d_ff x d_model; a bias or a gain a vector of its width.
void later_weights(const Article& art, Start& s) {
    // after X, and after this set's first weight (a later set's W^O is not the first set's)
    std::size_t from = s.inputs[0];
    if (s.inputs.size() >= 4 && std::none_of(s.inputs.begin() + 1, s.inputs.begin() + 4, [](std::size_t i) { return i == kNone; }))
        from = std::max(from, *std::min_element(s.inputs.begin() + 1, s.inputs.begin() + 4));
    const std::size_t inner = s.d_k ? s.d_k : s.d_model;
    std::map<std::string, std::size_t> found;
    for (std::size_t i = from + 1; i < art.arrays.size(); ++i) {
        const auto& a = art.arrays[i];
        const std::string role = later_role(a.name);
        if (role.empty() || found.count(role) || !is_table(a)) continue;
        const std::size_t rows = a.rows.size(), cols = a.rows[0].size();
        const bool vector = rows == 1;
        bool fits = false;
        // W^O: heads·d_k rows (columns as nn.Linear keeps it), to d_model or another width (a module's out_proj)
        if (role == "W_O") fits = s.out_in ? cols == inner : rows == inner;
        else if (role == "b_Q" || role == "b_K" || role == "b_V") fits = vector && cols == inner;
        else if (role == "W_1") fits = rows == s.d_model && cols >= 1 && !vector;
        else if (role == "W_2") fits = cols == s.d_model && !vector;
        else if (role == "b_1") fits = vector;
        else if (role == "b_O") fits = vector;  // checked against W^O's width below
        else fits = vector && cols == s.d_model;  // b_2, the gains and biases of the norms
        if (fits) found[role] = i;
    }
    if (found.count("W_O")) {  // attn_out's width: W^O's other side
        const PrintedArray& o = art.arrays[found["W_O"]];
        const std::size_t width = s.out_in ? o.rows.size() : o.rows[0].size();
        if (width != s.d_model) s.d_out = width;
        if (found.count("b_O") && art.arrays[found["b_O"]].rows[0].size() != width) found.erase("b_O");
    }
    // the projections' biases (nn.Linear's, when the code keeps them)
    for (const char* role : {"b_Q", "b_K", "b_V"})
        if (found.count(role)) {
            s.inputs.push_back(found[role]);
            s.later.push_back(role);
            s.reasons.push_back(fmt::format("{}: the array at {} (named {})", role, art.arrays[found[role]].place.describe(),
                                            art.arrays[found[role]].name));
        }
    if (!found.count("W_O")) return;  // the block goes on from the attention's output: without W^O, no further
    const bool ffn = found.count("W_1") && found.count("W_2") && art.arrays[found["W_2"]].rows.size() == art.arrays[found["W_1"]].rows[0].size() &&
                     (!found.count("b_1") || art.arrays[found["b_1"]].rows[0].size() == art.arrays[found["W_1"]].rows[0].size());
    for (const char* role : {"W_O", "b_O", "ln1_gamma", "ln1_beta", "W_1", "b_1", "W_2", "b_2", "ln2_gamma", "ln2_beta"}) {
        if (!found.count(role)) continue;
        const std::string r = role;
        if (!ffn && (r == "W_1" || r == "b_1" || r == "W_2" || r == "b_2" || r.rfind("ln2", 0) == 0)) continue;
        if (s.d_out && r != "W_O" && r != "b_O") continue;  // attn_out of another width: no residual, no block after it
        s.inputs.push_back(found[r]);
        s.later.push_back(r);
        s.reasons.push_back(fmt::format("{}: the array at {} (named {})", r, art.arrays[found[r]].place.describe(), art.arrays[found[r]].name));
    }
    if (ffn && !s.d_out) s.d_ff = art.arrays[found["W_1"]].rows[0].size();
}

// The embeddings starts: the token list most arrays have a row for, X (named, else the first with a row per
// token), and each set of weights: the k-th arrays named W^Q, W^K, W^V, of one shape, d_model rows (x·W) or,
// named, d_model columns and another count of rows (x·Wᵀ, as nn.Linear keeps its weight); without a named
// set, the named ones with the d_model-row arrays after X in the missing places. Then, X named so, X alone
// (the identity for every weight: Q = K = V = X, as a tutorial works attention before it brings weights in).
std::vector<Start> embed_starts(const Article& art) {
    Start s;
    s.kind = StartKind::embed;
    s.inputs = {kNone, kNone, kNone, kNone};
    const auto cands = token_candidates(art);
    std::size_t best = kNone, best_score = 0;
    for (std::size_t c = 0; c < cands.size(); ++c) {
        std::size_t score = 0;
        for (const auto& a : art.arrays)
            if (is_table(a) && a.rows.size() == cands[c].words.size()) score += 1 + (a.row_labels == cands[c].words ? 2 : 0);
        if (score > best_score) best = c, best_score = score;
    }
    std::size_t T = 0;
    if (best != kNone) {
        s.tokens = cands[best].words;
        T = s.tokens.size();
    } else {  // no list of tokens: an X named so, its tokens its labels, else t1 ... tn
        for (const auto& a : art.arrays)
            if (is_table(a) && a.rows.size() >= 2 && a.rows[0].size() >= 2 && names_input(a.name) && a.shape.size() != 3) {
                T = a.rows.size();
                break;
            }
        if (T == 0) return {};
    }
    std::size_t x = kNone;
    bool named_x = false;  // X found by its name (X, E, inputs, embeddings), not as the first with a row per token
    for (int pass = 0; pass < (best == kNone ? 1 : 2) && x == kNone; ++pass)
        for (std::size_t i = 0; i < art.arrays.size(); ++i) {
            const auto& a = art.arrays[i];
            // a batch of sequences (B, T, D) is no one sequence's X: its rows run together would attend across sequences
            if (!is_table(a) || a.rows[0].size() < 2 || a.shape.size() == 3) continue;
            // a token per column (q = W_Q x): its columns labelled by the tokens, or named X with T columns, not T rows
            const bool columns = a.rows.size() != T && a.rows.size() >= 2 && a.rows[0].size() == T && !a.generated &&
                                 ((best != kNone && a.col_labels == s.tokens) || (pass == 0 && names_input(a.name)));
            if (a.rows.size() != T && !columns) continue;
            if (pass == 0 && !names_input(a.name) && !(a.generated && a.generated->embedding) && !columns) continue;
            if (pass == 1 && (!step_hint(a.name).empty() || sums_to_one(a))) continue;  // a named Q or a matrix of weights is no X
            x = i;
            named_x = pass == 0 && names_input(a.name);
            s.x_columns = columns;
            s.d_model = columns ? a.rows.size() : a.rows[0].size();
            if (best == kNone) {
                std::string from;
                s.tokens = tokens_for(cands, a, T, from);
                s.reasons.push_back(fmt::format("tokens: {} ({}: no list of tokens fits the arrays)", json(s.tokens).dump(), from));
            } else {
                s.reasons.push_back(fmt::format("tokens: {} ({}; {} printed arrays have a row per token)", json(s.tokens).dump(),
                                                cands[best].from, best_score));
            }
            s.reasons.push_back(columns ? fmt::format("X: the {} x {} array at {}, a token per column (read transposed)", s.d_model, T,
                                                      a.place.describe())
                                        : fmt::format("X: the {} x {} array at {}{}", T, s.d_model, a.place.describe(),
                                                      pass == 0 ? " (named " + a.name + ")" : " (the first with a row per token)"));
            break;
        }
    if (x == kNone) return {};
    s.inputs[0] = x;
    // Other embeddings the code generates (an nn.Embedding's rows looked up), each with the tokens near it: a
    // set of weights after one of them is run from it. A printed copy of a generated X (print(x)) is a claim.
    std::vector<Start> xs{s};
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const auto& a = art.arrays[i];
        if (i == x || !a.generated || !a.generated->embedding || !is_table(a) || a.rows[0].size() < 2) continue;
        Start o = s;
        o.inputs[0] = i;
        o.d_model = a.rows[0].size();
        std::string from;
        o.tokens = tokens_for(cands, a, a.rows.size(), from);
        o.reasons = {fmt::format("tokens: {} ({})", json(o.tokens).dump(), from),
                     fmt::format("X: the {} x {} array at {} (named {}; generated: {})", a.rows.size(), o.d_model, a.place.describe(), a.name,
                                 a.generated->how)};
        xs.push_back(std::move(o));
    }
    std::sort(xs.begin(), xs.end(), [](const Start& a, const Start& b) { return a.inputs[0] < b.inputs[0]; });
    // the X a weight of `d_model` rows (x·W) or columns (x·Wᵀ, named) at array `w` is read with: the last before it
    auto x_for = [&](std::size_t w, bool out_in) -> const Start* {
        const PrintedArray& a = art.arrays[w];
        const Start* found = nullptr;
        for (const Start& c : xs)
            if (c.inputs[0] < w && (out_in ? a.rows[0].size() : a.rows.size()) == c.d_model) found = &c;
        if (!found)
            for (const Start& c : xs)  // a weight printed before its X
                if ((out_in ? a.rows[0].size() : a.rows.size()) == c.d_model) return &c;
        return found;
    };
    // the weights by role, in order, and the unnamed arrays after X that could be weights
    std::vector<std::size_t> named[3], unnamed;
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const auto& a = art.arrays[i];
        if (!is_table(a) || std::any_of(xs.begin(), xs.end(), [&](const Start& c) { return c.inputs[0] == i; })) continue;
        const int role = weight_role(a.name);
        const bool in_out = x_for(i, false) != nullptr;
        const bool out_in = role >= 0 && !in_out && x_for(i, true) != nullptr;  // only named weights are read so
        if (role >= 0 && (in_out || out_in)) named[role].push_back(i);
        else if (role < 0 && a.rows.size() == s.d_model && i > x && step_hint(a.name).empty() && !sums_to_one(a)) unnamed.push_back(i);
    }
    const char* names[] = {"W_Q", "W_K", "W_V"};
    auto describe_weights = [&](Start& w) {
        for (std::size_t r = 0; r < 3; ++r) {
            const PrintedArray& a = art.arrays[w.inputs[1 + r]];
            w.reasons.push_back(a.name.empty() || weight_role(a.name) < 0
                                    ? fmt::format("{}: the array at {} (a d_model-row array after X)", names[r], a.place.describe())
                                    : fmt::format("{}: the array at {} (named {}{})", names[r], a.place.describe(), a.name,
                                                  a.generated       ? "; generated: " + a.generated->how
                                                  : a.joined_heads ? "; " + a.quote
                                                                    : ""));
        }
        const PrintedArray& q = art.arrays[w.inputs[1]];
        w.out_in = q.rows.size() != w.d_model;
        if (w.out_in) {
            w.d_k = q.rows.size();
            w.reasons.push_back(fmt::format("the weights are printed {} x {}, d_k x d_model as nn.Linear keeps them: read as x·Wᵀ",
                                            w.d_k, w.d_model));
        } else {
            w.d_k = q.rows[0].size() == w.d_model ? 0 : q.rows[0].size();
        }
        later_weights(art, w);
    };
    std::vector<Start> out;
    const std::size_t sets = std::min({named[0].size(), named[1].size(), named[2].size()});
    for (std::size_t k = 0; k < sets; ++k) {
        const std::size_t q = named[0][k], kk = named[1][k], v = named[2][k];
        if (art.arrays[q].shape != art.arrays[kk].shape || art.arrays[q].rows.size() != art.arrays[v].rows.size()) continue;
        const Start* with = x_for(q, false);
        if (!with) with = x_for(q, true);
        Start w = *with;
        w.inputs = {with->inputs[0], q, kk, v};
        describe_weights(w);
        out.push_back(std::move(w));
    }
    if (out.empty()) {  // no whole named set: the named ones, the d_model-row arrays after X in the missing places
        Start w = s;
        std::size_t u = 0;
        for (std::size_t r = 0; r < 3; ++r) w.inputs[1 + r] = !named[r].empty() ? named[r][0] : u < unnamed.size() ? unnamed[u++] : kNone;
        if (std::none_of(w.inputs.begin(), w.inputs.end(), [](std::size_t i) { return i == kNone; }) &&
            art.arrays[w.inputs[1]].rows.size() == art.arrays[w.inputs[2]].rows.size() &&
            (art.arrays[w.inputs[1]].rows.size() == s.d_model || art.arrays[w.inputs[1]].rows[0].size() == s.d_model)) {
            describe_weights(w);
            out.push_back(std::move(w));
        }
    }
    // Another X named so after a set of weights, printing other numbers ("the same weights, a new sentence"):
    // a run from it with those weights, its tokens the list that fits its rows
    const std::size_t sets_found = out.size();
    for (std::size_t i = x + 1; i < art.arrays.size() && !s.x_columns; ++i) {
        const PrintedArray& a = art.arrays[i];
        if (!is_table(a) || a.shape.size() == 3 || a.generated || !names_input(a.name) || a.rows.size() < 2 ||
            a.rows[0].size() != s.d_model || a.rows == art.arrays[x].rows)
            continue;
        for (std::size_t k = 0; k < sets_found; ++k) {
            if (i <= *std::max_element(out[k].inputs.begin() + 1, out[k].inputs.end())) continue;
            Start o = out[k];
            o.inputs[0] = i;
            std::string from;
            o.tokens = tokens_for(cands, a, a.rows.size(), from);
            o.reasons = {fmt::format("tokens: {} ({})", json(o.tokens).dump(), from),
                         fmt::format("X: the {} x {} array at {} (named {}; another X, run with the weights before it)", a.rows.size(),
                                     o.d_model, a.place.describe(), a.name)};
            describe_weights(o);
            out.push_back(std::move(o));
        }
    }
    // without a list of tokens, an X named so starts only a run with weights (an E beside its positions is theirs)
    if (named_x && best != kNone) {
        Start alone = s;
        alone.identity = true;
        alone.reasons.push_back("no weights: W_Q, W_K and W_V the identity, so that Q = K = V = X");
        out.push_back(std::move(alone));
    }
    return out;
}

// The V of an example whose scores or weights are at `at`: the next array named V with a row per key.
std::size_t value_after(const Article& art, std::size_t at, std::size_t keys) {
    for (std::size_t j = at + 1; j < art.arrays.size() && j <= at + kTripleSpan; ++j)
        if (is_table(art.arrays[j]) && step_hint(art.arrays[j].name) == "hook_v" && art.arrays[j].rows.size() == keys) return j;
    for (std::size_t j = at; j-- > 0 && at - j <= kTripleSpan;)
        if (is_table(art.arrays[j]) && step_hint(art.arrays[j].name) == "hook_v" && art.arrays[j].rows.size() == keys) return j;
    return kNone;
}

// A LayerNorm's statistic or output by its name: "μ", "\\sigma", "mean", "Normalized" (norm.hpp's steps).
bool names_norm_step(const std::string& name) {
    const std::string h = step_hint(name);
    return h.rfind("ln1.", 0) == 0 || h == "hook_normalized";
}

// x + z = sum at the printed precision of each: every number within half a unit of each one's last place.
bool adds_up(const PrintedArray& x, const PrintedArray& z, const PrintedArray& sum) {
    bool nonzero = false;
    for (std::size_t r = 0; r < sum.rows.size(); ++r)
        for (std::size_t c = 0; c < sum.rows[r].size(); ++c) {
            const PrintedNumber &a = x.rows[r][c], &b = z.rows[r][c], &t = sum.rows[r][c];
            const double slack = 0.5 * (std::pow(10.0, -a.decimals) + std::pow(10.0, -b.decimals) + std::pow(10.0, -t.decimals));
            if (!std::isfinite(t.value) || std::fabs(a.value + b.value - t.value) > slack + 1e-9) return false;
            nonzero = nonzero || (a.value != 0 && b.value != 0);
        }
    return nonzero;
}

bool same_shape(const PrintedArray& a, const PrintedArray& b) {
    return is_table(a) && is_table(b) && a.rows.size() == b.rows.size() && a.rows[0].size() == b.rows[0].size();
}

// The row `v` is of an earlier printed array with labelled rows (x is row "ring" of X): its label, else "".
std::string row_label_of(const Article& art, std::size_t v) {
    const PrintedArray& a = art.arrays[v];
    constexpr std::size_t kLookBack = 256;  // the example's X is near it; a bound keeps a long article linear
    if (a.rows.size() != 1) return "";
    for (std::size_t j = v > kLookBack ? v - kLookBack : 0; j < v; ++j) {
        const PrintedArray& e = art.arrays[j];
        if (!is_table(e) || e.rows[0].size() != a.rows[0].size() || !labelled(e.row_labels, e.rows.size())) continue;
        for (std::size_t r = 0; r < e.rows.size(); ++r)
            if (e.rows[r] == a.rows[0]) return e.row_labels[r];
    }
    return "";
}

// A table of the paper's sinusoidal encodings: its first row sin 0, cos 0, ... = 0, 1, 0, 1, ... and its
// second row's first number sin 1 = 0.841..., each at its printed decimals. The embeddings are the array of
// its shape printed just before it and named as an input (E, X, embeddings), if any.
void position_starts(const Article& art, const std::vector<TokenCandidate>& cands, std::vector<Start>& out) {
    constexpr std::size_t kNear = 3;
    const auto& A = art.arrays;
    auto close_to = [](const PrintedNumber& n, double v) { return std::fabs(n.value - v) <= 0.5 * std::pow(10.0, -n.decimals) + 1e-9; };
    for (std::size_t i = 0; i < A.size(); ++i) {
        const PrintedArray& a = A[i];
        if (!is_table(a) || a.rows.size() < 2 || a.rows[0].size() < 2 || a.rows[0].size() % 2) continue;
        // position 0's row: sin 0 = 0 and cos 0 = 1, interleaved (0, 1, 0, 1) or in halves (0, 0, 1, 1)
        const std::size_t C = a.rows[0].size();
        bool interleaved = close_to(a.rows[1][0], std::sin(1.0)), halves = interleaved;
        for (std::size_t c = 0; c < C; ++c) {
            interleaved = interleaved && close_to(a.rows[0][c], c % 2 ? 1.0 : 0.0);
            halves = halves && close_to(a.rows[0][c], c < C / 2 ? 0.0 : 1.0);
        }
        if (!interleaved && !halves) continue;
        Start s;
        s.pe_halves = !interleaved;
        s.kind = StartKind::positions;
        s.inputs = {i, kNone};
        s.d_model = a.rows[0].size();
        for (std::size_t j = i; j-- > 0 && i - j <= kNear;)
            if (same_shape(A[j], a) && names_input(A[j].name)) {
                s.inputs[1] = j;
                break;
            }
        std::string from;
        s.tokens = tokens_for(cands, a, a.rows.size(), from);
        s.reasons.push_back(fmt::format("tokens: {} ({})", json(s.tokens).dump(), from));
        s.reasons.push_back(fmt::format("positions: the {} x {} array at {} (its first row {}: sin and cos of 0)", a.rows.size(),
                                        s.d_model, a.place.describe(), s.pe_halves ? "0, ..., 0, 1, ..., 1" : "0, 1, 0, 1, ..."));
        if (s.inputs[1] != kNone)
            s.reasons.push_back(fmt::format("X: the array at {} (named {})", A[s.inputs[1]].place.describe(), A[s.inputs[1]].name));
        out.push_back(std::move(s));
    }
}

// A norm example's tokens: the label of the row `x` is of an earlier array (x_ring is X's row "ring"), else
// the list nearest `rows` that has a word per row.
void set_norm_tokens(const Article& art, const std::vector<TokenCandidate>& cands, std::size_t x, const PrintedArray& rows,
                     Start& s) {
    std::string from;
    const std::string label = row_label_of(art, x);
    if (!label.empty()) s.tokens = {label}, from = "x is its row of an earlier array";
    else s.tokens = tokens_for(cands, rows, rows.rows.size(), from);
    s.reasons.push_back(fmt::format("tokens: {} ({})", json(s.tokens).dump(), from));
}

// Add & Norm worked by hand: x and z printed just before their sum (the residual), or a row printed just
// before a number or an array named as the norm's (its mean, σ, variance, normalized values).
void norm_starts(const Article& art, const std::vector<TokenCandidate>& cands, std::vector<Start>& out) {
    constexpr std::size_t kMaxRows = 64, kNear = 4;
    const auto& A = art.arrays;
    std::vector<bool> summed(A.size(), false);
    for (std::size_t c = 0; c < A.size(); ++c) {
        const PrintedArray& sum = A[c];
        if (!is_table(sum) || sum.rows[0].size() < 2 || sum.rows.size() > kMaxRows) continue;
        std::vector<std::size_t> before;  // the nearest arrays of its shape before it
        for (std::size_t j = c; j-- > 0 && c - j <= kNear && before.size() < 2;)
            if (same_shape(A[j], sum)) before.push_back(j);
        if (before.size() == 2 && adds_up(A[before[1]], A[before[0]], sum)) {
            // x: the one that is a row of an earlier array or is named as an input; else the first printed
            std::size_t x = before[1], z = before[0];
            if (!row_label_of(art, z).empty() || (names_input(A[z].name) && !names_input(A[x].name))) std::swap(x, z);
            Start s;
            s.kind = StartKind::norm;
            s.inputs = {x, z};
            s.d_model = sum.rows[0].size();
            set_norm_tokens(art, cands, x, sum, s);
            s.reasons.push_back(fmt::format("x: the array at {}; z: the array at {}; their sum printed at {} (the residual x + z)",
                                            A[x].place.describe(), A[z].place.describe(), sum.place.describe()));
            summed[c] = true;
            out.push_back(std::move(s));
            continue;
        }
    }
    for (std::size_t v = 0; v < A.size(); ++v) {
        const PrintedArray& a = A[v];
        if (summed[v] || !is_table(a) || a.rows[0].size() < 2 || a.rows.size() > kMaxRows) continue;
        std::size_t named = 0;
        for (std::size_t j = v + 1; j < A.size() && j <= v + kNear && !named; ++j)
            if (names_norm_step(A[j].name)) named = j;
        if (!named) continue;
        Start s;
        s.kind = StartKind::norm;
        s.inputs = {v};
        s.d_model = a.rows[0].size();
        set_norm_tokens(art, cands, v, a, s);
        s.reasons.push_back(fmt::format("the row the norm reads: the array at {} (the {} at {} is named {})", a.place.describe(),
                                        A[named].form == PrintedForm::prose ? "number" : "array", A[named].place.describe(), A[named].name));
        out.push_back(std::move(s));
    }
}

}  // namespace

bool names_input(const std::string& name) {
    const std::string b = bare(name);
    return b == "X" || b == "E" || b == "x" || b == "Embeddings" || b == "embeddings" || b == "Embedding" || b == "H" ||
           word_role(name) == "X";
}

int weight_role(const std::string& name) {
    const std::string b = bare(name), words = word_role(name);
    if (words.size() == 3 && words[0] == 'W') return words[2] == 'Q' ? 0 : words[2] == 'K' ? 1 : 2;
    if (b.size() != 2 || (b[0] != 'W' && b[0] != 'w')) return -1;
    switch (std::toupper(static_cast<unsigned char>(b[1]))) {
        case 'Q': return 0;
        case 'K': return 1;
        case 'V': return 2;
        default: return -1;
    }
}


bool is_table(const PrintedArray& a) { return a.form != PrintedForm::prose && rectangular(a) && !a.operand && !a.ids && !a.joined; }

std::string bare(const std::string& name) {
    std::string out;
    for (char c : name)
        if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    return out;
}

OrderedJson input_json(const PrintedArray& a) {
    if (!a.generated || !a.generated->as_generator) return values_json(a);  // torch.randn's, numpy's: its values, every digit
    const Generated& g = *a.generated;
    return OrderedJson{{"generate", "torch_uniform"}, {"seed", g.seed}, {"offset", g.offset}, {"low", g.low}, {"high", g.high}};
}

OrderedJson values_json(const PrintedArray& a) {
    if (a.rows.size() == 1 && a.rows[0].size() == 1) return number_json(a.rows[0][0].value);
    auto row_json = [](const std::vector<PrintedNumber>& r) {
        OrderedJson out = OrderedJson::array();
        for (const auto& n : r) out.push_back(number_json(n.value));
        return out;
    };
    if (a.rows.size() == 1) return row_json(a.rows[0]);
    OrderedJson out = OrderedJson::array();
    for (const auto& r : a.rows) out.push_back(row_json(r));
    return out;
}

int decimals_of(const PrintedArray& a) {
    int d = 0;
    for (const auto& r : a.rows)
        for (const auto& n : r)
            if (std::isfinite(n.value)) d = std::max(d, n.decimals);
    return std::min(d, 8);
}

bool sums_to_one(const PrintedArray& a) {
    if (!rectangular(a) || a.rows[0].size() < 2) return false;
    for (const auto& r : a.rows) {
        double sum = 0;
        int decimals = 0;
        for (const auto& n : r) {
            if (!(n.value >= 0) || n.value > 1) return false;
            sum += n.value;
            decimals = std::max(decimals, n.decimals);
        }
        // weights rounded for print sum to 1 within a unit of their last place ([0.33, 0.33, 0.33] to 0.99);
        // embeddings of small numbers do not, but for chance ([0.1, 0.5, 0.0, 0.2])
        if (std::fabs(sum - 1) > std::pow(10.0, -decimals) + 1e-9) return false;
    }
    return true;
}

std::size_t Start::first() const {
    std::size_t f = kNone;
    for (std::size_t i : inputs) f = std::min(f, i);
    return f;
}

bool Start::has_v() const {
    return (kind == StartKind::qkv && inputs.size() > 2 && inputs[2] != kNone) ||
           ((kind == StartKind::scores || kind == StartKind::weights) && inputs.size() > 1 && inputs[1] != kNone);
}

void Start::without_v() {
    if (has_v()) inputs.back() = kNone;
    if (kind == StartKind::scores || kind == StartKind::weights) {
        reasons.erase(std::remove_if(reasons.begin(), reasons.end(), [](const std::string& r) { return r.rfind("V: ", 0) == 0; }),
                      reasons.end());
    }
}

std::string Start::describe() const {
    switch (kind) {
        case StartKind::embed: return identity ? "the embeddings X alone (Q = K = V = X)" : "the embeddings X and the weights W_Q, W_K, W_V";
        case StartKind::qkv: return has_v() ? "the printed Q, K and V" : "the printed Q and K";
        case StartKind::scores: return has_v() ? "the printed scores (and V)" : "the printed scores";
        case StartKind::weights: return has_v() ? "the printed attention weights (and V)" : "the printed attention weights";
        case StartKind::mask: return "the printed mask";
        case StartKind::norm: return inputs.size() == 2 ? "the printed x and z of the residual" : "the printed row the norm reads";
        case StartKind::positions: return inputs[1] != kNone ? "the printed positional encodings and embeddings" : "the printed positional encodings";
    }
    return "";
}

std::string Conventions::describe(StartKind kind) const {
    return describe_grid(kind) + (mask_raw ? ", masked before the scaling" : "");
}

std::string Conventions::describe_grid(StartKind kind) const {
    switch (kind) {
        case StartKind::embed:
            return fmt::format("{}scaling {}, mask {}, weights {}{}{}", heads == 1 ? "" : fmt::format("{} heads, ", heads),
                               scale ? "by 1/sqrt(d_k)" : "off", mask,
                               transposed ? "transposed (out_in)" : "as printed (in_out)",
                               activation.empty() ? "" : ", activation " + activation, sinusoidal ? ", sinusoidal positions" : "");
        case StartKind::qkv:
            return fmt::format("{} head{}, scaling {}, mask {}{}", heads, heads == 1 ? "" : "s", scale ? "by 1/sqrt(d_k)" : "off", mask,
                               max_shift ? "" : ", softmax of the scores as they are (no max subtracted)");
        case StartKind::scores:
            return fmt::format("the scores given as {}{}, mask {}{}", given_at,
                               given_at == "hook_scores_raw" ? (scale ? " then scaled by 1/sqrt(d_k)" : " and not scaled") : "", mask,
                               max_shift ? "" : ", softmax of the scores as they are (no max subtracted)");
        case StartKind::weights: return "the weights given as hook_pattern";
        case StartKind::mask: return "mask " + mask + (hint.empty() ? "" : " (its kind tried first: the text around it says \"" + hint + "\")");
        case StartKind::norm: return fmt::format("variance over {}, eps {}", unbiased ? "n - 1" : "n", eps);
        case StartKind::positions:
            return pe_halves ? "sinusoidal positions, every sine first, then every cosine (layout half)"
                             : "sinusoidal positions, sin and cos interleaved";
    }
    return "";
}

std::vector<Start> find_starts(const Article& art) {
    std::vector<Start> out;
    const std::vector<TokenCandidate> cands = token_candidates(art);
    bool found = false;  // a start from the embeddings and weights
    for (Start& e : embed_starts(art)) {
        found = found || !e.identity;
        out.push_back(std::move(e));
    }
    const auto& A = art.arrays;
    for (std::size_t i = 0; i < A.size(); ++i) {
        const PrintedArray& a = A[i];
        if (!is_table(a)) continue;
        const std::string hint = step_hint(a.name);
        const std::size_t rows = a.rows.size(), cols = a.rows[0].size();
        if (hint == "hook_q" && rows >= 2) {  // Q, then K of its shape and V of its rows, close after it
            Start s;
            s.kind = StartKind::qkv;
            s.inputs = {i, kNone, kNone};
            for (std::size_t j = i + 1; j < A.size() && j <= i + kTripleSpan; ++j) {
                if (!is_table(A[j])) continue;
                const std::string h = step_hint(A[j].name);
                if (h == "hook_k" && s.inputs[1] == kNone && A[j].rows.size() == rows && A[j].rows[0].size() == cols) s.inputs[1] = j;
                if (h == "hook_v" && s.inputs[2] == kNone && A[j].rows.size() == rows) s.inputs[2] = j;
            }
            if (s.inputs[1] == kNone) continue;
            std::string from;
            s.tokens = tokens_for(cands, a, rows, from);
            s.d_model = cols;
            if (s.inputs[2] != kNone && A[s.inputs[2]].rows[0].size() != cols) s.inputs[2] = kNone;  // a V of another width: not run
            s.reasons.push_back(fmt::format("tokens: {} ({})", json(s.tokens).dump(), from));
            s.reasons.push_back(fmt::format("Q, K{}: the arrays at {}, {}{} (named so)", s.has_v() ? " and V" : "", a.place.describe(),
                                            A[s.inputs[1]].place.describe(), s.has_v() ? ", " + A[s.inputs[2]].place.describe() : ""));
            out.push_back(std::move(s));
            continue;
        }
        // scores or weights: a square matrix, or one row of one, of at least two keys
        if (cols < 2 || (rows != 1 && rows != cols) || mask_like(a)) continue;
        // not named as another step's (Q, V) or as an input (a printed "Embedding" row is no score), unless its
        // sentence says it is ("the scores of one query against three keys: [..]": named by the last words)
        const bool said_scores = rows == 1 && names_scores(a.quote.substr(0, a.quote.find('[')));
        if (!hint.empty() && hint != "hook_scores_raw" && hint != "hook_scores_scaled" && hint != "hook_pattern" && !said_scores) continue;
        if (!a.name.empty() && hint.empty() && !names_scores(a.name) && !said_scores) continue;
        // a table whose columns are labelled otherwise than its rows holds dimensions, not keys ("x1 x2 x3")
        if (rows == cols && labelled(a.row_labels, rows) && labelled(a.col_labels, cols) && a.row_labels != a.col_labels) continue;
        Start s;
        const bool weights = sums_to_one(a);
        if (hint == "hook_pattern" && !weights) continue;
        s.kind = weights ? StartKind::weights : StartKind::scores;
        s.inputs = {i, value_after(art, i, cols)};
        std::string from;
        s.tokens = tokens_for(cands, a, cols, from);
        if (rows == 1) s.query_tokens = {labelled(a.row_labels, 1) ? a.row_labels[0] : "row"};
        s.d_model = s.has_v() ? A[s.inputs[1]].rows[0].size() : 0;
        const long d_model = art.setting("d_model"), d_k = art.setting("d_k");
        if (!s.d_model) s.d_model = d_model > 0 ? static_cast<std::size_t>(d_model) : d_k > 0 ? static_cast<std::size_t>(d_k) : cols;
        if (d_k > 0 && static_cast<std::size_t>(d_k) != s.d_model) s.d_k = static_cast<std::size_t>(d_k);
        s.reasons.push_back(fmt::format("tokens: {} ({})", json(s.tokens).dump(), from));
        s.reasons.push_back(fmt::format("{}: the {} x {} array at {}{}{}", weights ? "attention weights" : "scores", rows, cols,
                                        a.place.describe(), a.name.empty() ? "" : " (named " + a.name + ")",
                                        weights ? ", every row summing to 1" : ""));
        if (s.has_v()) s.reasons.push_back("V: the array at " + A[s.inputs[1]].place.describe());
        out.push_back(std::move(s));
    }
    // a mask printed alone: its tokens the column labels (else the row labels, else the nearest list)
    for (std::size_t i = 0; i < A.size(); ++i) {
        const PrintedArray& a = A[i];
        if (!is_table(a) || !prints_mask(a)) continue;
        const std::size_t rows = a.rows.size(), cols = a.rows[0].size();
        if (cols > kMaxMaskTokens) continue;
        Start s;
        s.kind = StartKind::mask;
        s.inputs = {i};
        std::string from;
        if (keyed_row(a)) {  // a sentence's row: over the tokens of the list it counts in
            s.tokens = row_tokens(art, a, s.token_list, from);
            if (s.tokens.empty() || s.tokens.size() > kMaxMaskTokens || !(s.drawn = expand_row(a, s.tokens))) continue;
        } else if (labelled(a.col_labels, cols)) {
            s.tokens = a.col_labels, from = "its column labels";
        } else {
            s.tokens = tokens_for(cands, a, cols, from);
        }
        s.d_model = 2;  // any: the mask does not depend on the scores, given as zeros
        s.reasons.push_back(fmt::format("tokens: {} ({})", json(s.tokens).dump(), from));
        if (s.drawn)
            s.reasons.push_back(fmt::format("mask: the row of {} the sentence at {} gives, {}", a.row_labels[0], a.place.describe(), a.legend));
        else
            s.reasons.push_back(fmt::format("mask: the {} x {} array at {}{}", rows, cols, a.place.describe(),
                                            a.legend.empty() ? ", every number 0 or -inf" : ", read " + a.legend));
        if (const std::size_t w = stated_window(art, a))
            s.reasons.push_back(fmt::format("the text states a window of {}: the windows tried are of {} only", w, w));
        for (const auto& [kind, word] : mask_hints(a)) s.reasons.push_back(fmt::format("the text around the mask says \"{}\": {} tried first", word, kind));
        out.push_back(std::move(s));
    }
    norm_starts(art, cands, out);
    if (!found) position_starts(art, cands, out);  // from the embeddings and weights, the search tries the positions itself
    std::stable_sort(out.begin(), out.end(), [](const Start& a, const Start& b) { return a.first() < b.first(); });
    return out;
}

std::vector<Conventions> conventions_for(const Article& art, const Start& s) {
    std::vector<Conventions> out;
    const std::size_t rows = art.arrays[s.inputs[0]].rows.size();
    const std::vector<std::string> masks = s.query_tokens.empty() && rows >= 2 ? std::vector<std::string>{"none", "causal"}
                                                                                : std::vector<std::string>{"none"};
    switch (s.kind) {
        case StartKind::embed: {
            // one head, two, or as many as the prose states: W^Q's columns split into equal heads
            const std::size_t width = s.d_k ? s.d_k : s.d_model;
            std::vector<std::size_t> heads{1};
            const long h = art.setting("heads");
            // a list of heads the code builds (nn.ModuleList of a head module): its count
            const PrintedArray& wq = art.arrays[s.inputs[1] == kNone ? s.inputs[0] : s.inputs[1]];
            const std::size_t listed = s.identity ? 0 : wq.generated ? wq.generated->heads : wq.joined_heads;
            for (std::size_t n : {std::size_t{2}, static_cast<std::size_t>(std::max(h, 1L)), listed})
                if (n > 1 && width % n == 0 && width / n >= 1 && std::find(heads.begin(), heads.end(), n) == heads.end()) heads.push_back(n);
            if (s.identity) heads = {1};  // attention on X itself: one head
            for (std::size_t n : heads)
                for (bool transposed : {false, true})
                    for (const auto& mask : masks)
                        for (bool scale : {true, false}) {
                            if (transposed != s.out_in && (s.d_k || s.out_in || s.identity)) continue;  // a non-square W reads one way
                            for (const char* act : {"relu", "gelu"}) {
                                if (!s.d_ff && std::string(act) != "relu") continue;
                                for (bool sinusoidal : {false, true}) {
                                    if (sinusoidal && s.d_model % 2) continue;  // PE pairs the dimensions
                                    out.push_back({.scale = scale, .mask = mask, .transposed = transposed, .heads = n, .activation = s.d_ff ? act : "", .sinusoidal = sinusoidal});
                                }
                            }
                        }
            break;
        }
        case StartKind::qkv: {
            std::vector<std::size_t> heads{1};
            const long h = art.setting("heads");
            if (h > 1 && s.d_model % static_cast<std::size_t>(h) == 0) heads.push_back(static_cast<std::size_t>(h));
            if (s.d_model % 2 == 0 && s.d_model >= 4 && std::find(heads.begin(), heads.end(), 2) == heads.end()) heads.push_back(2);
            for (std::size_t n : heads)
                for (const auto& mask : masks)
                    for (bool scale : {true, false}) out.push_back({.scale = scale, .mask = mask, .heads = n});
            break;
        }
        case StartKind::scores: {
            // as named: scaled scores given after the scaling; raw ones before it, scaled or not
            const bool scaled = step_hint(art.arrays[s.inputs[0]].name) == "hook_scores_scaled";
            for (const auto& mask : masks) {
                if (scaled) {
                    out.push_back({.scale = true, .mask = mask, .given_at = "hook_scores_scaled"});
                } else {
                    out.push_back({.scale = false, .mask = mask, .given_at = "hook_scores_raw"});
                    out.push_back({.scale = true, .mask = mask, .given_at = "hook_scores_raw"});
                }
            }
            break;
        }
        case StartKind::weights: out.push_back({.given_at = "hook_pattern"}); break;
        case StartKind::mask: return mask_conventions(art, s);
        case StartKind::positions: {
            Conventions c;
            c.pe_halves = s.pe_halves;
            out.push_back(std::move(c));
            return out;
        }
        case StartKind::norm:
            for (bool unbiased : {false, true})
                for (double eps : {1e-5, 0.0}) {
                    Conventions c;
                    c.unbiased = unbiased;
                    c.eps = eps;
                    out.push_back(std::move(c));
                }
            return out;
    }
    // the softmax worked by hand: exp of each score as it is, no maximum subtracted (its exps print other
    // numbers; its weights are the same), every convention again so (tried after, so that a tie keeps PyTorch's)
    if (s.kind == StartKind::scores || s.kind == StartKind::qkv) {
        const std::size_t n = out.size();
        for (std::size_t k = 0; k < n; ++k) {
            Conventions c = out[k];
            c.max_shift = false;
            out.push_back(std::move(c));
        }
    }
    // a mask drawn among the example's numbers, of another kind (a window, global tokens, blocks, padding):
    // every causal convention tried again under it
    if (const auto drawn = drawn_mask(art, s)) {
        const std::size_t n = out.size();
        for (std::size_t k = 0; k < n; ++k)
            if (out[k].mask == "causal") {
                Conventions c = out[k];
                c.mask = drawn->mask;
                c.mask_json = drawn->mask_json;
                c.hint = drawn->hint;
                out.push_back(std::move(c));
            }
    }
    // code that masks the raw scores and scales after (masked_fill on q @ k.T, then / sqrt(d_k)): the same
    // weights, other masked scores; each masked, scaled convention tried again so (after: a tie keeps PyTorch's)
    if (s.kind == StartKind::embed || s.kind == StartKind::qkv || s.kind == StartKind::scores) {
        const std::size_t n = out.size();
        for (std::size_t k = 0; k < n; ++k)
            if (out[k].mask != "none" && out[k].scale && (s.kind != StartKind::scores || out[k].given_at == "hook_scores_raw")) {
                Conventions c = out[k];
                c.mask_raw = true;
                out.push_back(std::move(c));
            }
    }
    return out;
}

std::string without_markup(const std::string& name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '\\') {
            std::size_t j = i + 1;
            while (j < name.size() && std::isalpha(static_cast<unsigned char>(name[j]))) ++j;
            const std::string_view command = std::string_view(name).substr(i + 1, j - i - 1);
            bool markup = false;
            for (std::string_view m : {"text", "textbf", "textit", "mathrm", "mathbf", "mathit", "operatorname", "boldsymbol", "frac",
                                       "dfrac", "sqrt", "left", "right", "cdot", "times", "quad", "qquad"})
                markup = markup || command == m;
            if (markup) {
                i = j - 1;
                continue;
            }
        }
        out += name[i];
    }
    return out;
}

std::string claim_id(const std::string& base, std::map<std::string, int>& used) {
    std::string id;
    for (char c : base)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') id += c;
    if (id.empty()) id = "array";
    // `used` holds every id given (its count > 0) and, per base, the last suffix tried: "Q-2" made for a
    // second "Q" is taken, so a later base "Q-2" (a row of a claim named Q) becomes "Q-2-2", never a twin.
    int& tried = used[id];
    if (tried == 0) return tried = 1, id;
    for (int n = tried + 1;; ++n) {
        const std::string candidate = id + "-" + std::to_string(n);
        if (used[candidate] == 0) {
            used[id] = n;
            used[candidate] = 1;
            return candidate;
        }
    }
}

std::string lesson_id(const std::string& file) {
    std::string stem = std::filesystem::path(file).stem().string(), id;
    for (char c : stem) id += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
    return id.empty() ? "draft" : id;
}

OrderedJson base_lesson(const Article& art, const Start& s, const Conventions& c) {
    const std::string doc = std::filesystem::path(art.file).filename().string();
    OrderedJson l = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", lesson_id(art.file)},
                     {"title", "Drafted from " + doc}, {"source", {{"document", doc}}}};
    l["tokens"] = s.tokens;
    if (!s.query_tokens.empty()) l["query_tokens"] = s.query_tokens;
    OrderedJson config = {{"d_model", s.d_model}, {"heads", c.heads}, {"mask", c.mask_json.is_null() ? OrderedJson(c.mask) : c.mask_json},
                          {"scale", c.scale}};
    if (s.d_k) config["d_k"] = s.kind == StartKind::embed ? s.d_k / c.heads : s.d_k;  // embed: W^Q's columns over the heads
    if (c.transposed) config["weight_layout"] = "out_in";
    if (!c.max_shift) config["max_shift"] = false;
    if (c.mask_raw) config["mask_at"] = "raw";
    if (c.sinusoidal) config["positions"] = "sinusoidal";
    l["config"] = config;
    const auto& A = art.arrays;
    const std::string attn = "blocks.0.attn.";
    auto rows_json = [](const PrintedArray& a) {  // a vector as one row
        OrderedJson v = values_json(a);
        return a.rows.size() == 1 ? OrderedJson::array({v}) : v;
    };
    // a computed step the run starts from, printed rounded: its claims checked against values that print the same
    auto given_rounded = [&](const std::string& step, std::size_t input) {
        if (!A[input].generated && decimals_of(A[input]) >= kGivenPrintDecimals) l["input_decimals"]["given." + step] = decimals_of(A[input]);
    };
    switch (s.kind) {
        case StartKind::embed: {
            l["run"] = {{"from", "embed"}, {"to", "mix"}};
            if (s.x_columns) {  // a token per column: X is its transpose
                const PrintedArray& x = A[s.inputs[0]];
                PrintedArray t;
                for (std::size_t j = 0; j < x.rows[0].size(); ++j) {
                    t.rows.emplace_back();
                    for (const auto& row : x.rows) t.rows.back().push_back(row[j]);
                }
                l["inputs"] = {{"X", values_json(t)}};
            } else {
                l["inputs"] = {{"X", input_json(A[s.inputs[0]])}};
            }
            OrderedJson w = OrderedJson::object();
            const char* names[] = {"W_Q", "W_K", "W_V"};
            for (std::size_t r = 0; r < 3; ++r)
                w[names[r]] = s.identity ? OrderedJson{{"generate", "identity"}} : input_json(A[s.inputs[1 + r]]);
            // the block's later weights: through Add & Norm (post-norm, as the original transformer), and the FFN
            for (std::size_t k = 0; k < s.later.size(); ++k) w[s.later[k]] = input_json(A[s.inputs[4 + k]]);
            if (s.d_out) {  // W^O to another width (a module's out_proj): the run ends at its output
                config["d_out"] = s.d_out;
                l["config"] = config;
                l["run"]["to"] = "out";
            } else if (std::find(s.later.begin(), s.later.end(), "W_O") != s.later.end()) {  // the block beyond the attention
                l["run"]["to"] = s.d_ff ? "norm2" : "norm1";
                for (const char* n : {"ln1", "ln2"}) {
                    if (!s.d_ff && std::string(n) == "ln2") continue;
                    // one γ and β printed for both norms: the second's too; none printed: nn.LayerNorm's initial ones
                    const std::string g = std::string(n) + "_gamma", b = std::string(n) + "_beta";
                    if (!w.contains(g)) w[g] = w.contains("ln1_gamma") ? w["ln1_gamma"] : OrderedJson{{"generate", "ones"}};
                    if (!w.contains(b)) w[b] = w.contains("ln1_beta") ? w["ln1_beta"] : OrderedJson{{"generate", "zeros"}};
                }
                if (s.d_ff) {
                    config["d_ff"] = s.d_ff;
                    config["activation"] = c.activation.empty() ? "relu" : c.activation;
                    l["config"] = config;
                }
            }
            l["weights"] = w;
            // printed by code at 4 decimals or more (PyTorch's 4): values the article computed with more digits
            // than it printed; a claim off by their rounding is checked against values that print the same
            auto printed_rounded = [&](const std::string& key, std::size_t input) {
                if (!A[input].generated && decimals_of(A[input]) >= kInputPrintDecimals) l["input_decimals"][key] = decimals_of(A[input]);
            };
            printed_rounded("inputs.X", s.inputs[0]);
            for (std::size_t r = 0; r < 3 && !s.identity; ++r) printed_rounded(std::string("weights.") + names[r], s.inputs[1 + r]);
            for (std::size_t k = 0; k < s.later.size(); ++k) printed_rounded("weights." + s.later[k], s.inputs[4 + k]);
            break;
        }
        case StartKind::qkv:
            l["run"] = {{"from", "scores"}, {"to", s.has_v() ? "mix" : "softmax"}};
            l["given"][attn + "hook_q"] = values_json(A[s.inputs[0]]);
            l["given"][attn + "hook_k"] = values_json(A[s.inputs[1]]);
            if (s.has_v()) l["given"][attn + "hook_v"] = values_json(A[s.inputs[2]]);
            given_rounded(attn + "hook_q", s.inputs[0]);
            given_rounded(attn + "hook_k", s.inputs[1]);
            break;
        case StartKind::scores: {
            const bool raw = c.given_at == "hook_scores_raw";
            l["run"] = {{"from", raw ? "scale" : "mask"}, {"to", s.has_v() ? "mix" : "softmax"}};
            OrderedJson v = values_json(A[s.inputs[0]]);
            if (A[s.inputs[0]].rows.size() == 1) v = OrderedJson::array({v});  // one query's row
            l["given"][attn + c.given_at] = v;
            if (s.has_v()) l["given"][attn + "hook_v"] = values_json(A[s.inputs[1]]);
            given_rounded(attn + c.given_at, s.inputs[0]);
            break;
        }
        case StartKind::mask: {
            // the mask alone: the stage run over zero scores (any would do: the mask does not read them)
            l["run"] = {{"from", "mask"}, {"to", "mask"}};
            const std::size_t T = s.tokens.size();
            l["given"][attn + "hook_scores_scaled"] = OrderedJson(std::vector<std::vector<int>>(T, std::vector<int>(T, 0)));
            break;
        }
        case StartKind::positions: {
            // the embed stage alone: X (printed, else zeros) + PE
            config = {{"d_model", s.d_model}, {"heads", 1},
                      {"positions", c.pe_halves ? OrderedJson{{"kind", "sinusoidal"}, {"layout", "half"}} : OrderedJson("sinusoidal")}};
            l["config"] = config;
            l["run"] = {{"from", "embed"}, {"to", "embed"}};
            const std::size_t T = s.tokens.size();
            l["inputs"] = {{"X", s.inputs[1] != kNone ? values_json(A[s.inputs[1]])
                                                       : OrderedJson(std::vector<std::vector<int>>(T, std::vector<int>(s.d_model, 0)))}};
            break;
        }
        case StartKind::norm: {
            // no weights printed: the norm's γ and β and the FFN are not computable, and their printed
            // numbers not checkable
            config.erase("mask");
            config.erase("scale");
            config["d_ff"] = s.d_model;
            config["activation"] = "relu";
            config["eps"] = c.eps;
            if (c.unbiased) config["variance"] = "unbiased";
            l["config"] = config;
            if (s.inputs.size() == 2) {
                l["run"] = {{"from", "add1"}, {"to", "norm2"}};
                l["given"]["blocks.0.hook_resid_pre"] = rows_json(A[s.inputs[0]]);
                l["given"]["blocks.0.hook_attn_out"] = rows_json(A[s.inputs[1]]);
            } else {
                l["run"] = {{"from", "norm1"}, {"to", "norm1"}};
                l["given"]["blocks.0.hook_resid_mid"] = rows_json(A[s.inputs[0]]);
            }
            break;
        }
        case StartKind::weights: {
            l["run"] = {{"from", "mix"}, {"to", "mix"}};
            OrderedJson v = values_json(A[s.inputs[0]]);
            if (A[s.inputs[0]].rows.size() == 1) v = OrderedJson::array({v});
            l["given"][attn + "hook_pattern"] = v;
            if (s.has_v()) l["given"][attn + "hook_v"] = values_json(A[s.inputs[1]]);
            given_rounded(attn + "hook_pattern", s.inputs[0]);
            break;
        }
    }
    return l;
}

}  // namespace attntrace
