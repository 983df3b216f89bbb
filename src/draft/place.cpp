#include "draft/place.hpp"

#include <algorithm>
#include <initializer_list>
#include <cctype>
#include <cmath>

#include "core/decimal.hpp"
#include "trace/derived.hpp"
#include "trace/trace.hpp"

namespace attntrace {

namespace {

// A 2-D view of a step: rows x cols, element (i, j) at offset + i·row_stride + j·col_stride; the row
// and column axes' names ("" for a step of one axis) and the `at` that selects it.
struct Slice {
    json at = json::object();
    std::size_t offset = 0, rows = 1, cols = 0, row_stride = 0, col_stride = 1;
    std::string row_axis, col_axis;
};

bool is_head_axis(const std::string& axis) { return axis == "head" || axis == "kv_head"; }

std::vector<Slice> slices_of(const Step& s) {
    std::vector<Slice> out;
    const Shape& sh = s.shape;
    const auto& ax = s.axes;
    if (sh.size() == 1) {
        out.push_back({json::object(), 0, 1, sh[0], 0, 1, "", ax[0]});
    } else if (sh.size() == 2) {
        out.push_back({json::object(), 0, sh[0], sh[1], sh[1], 1, ax[0], ax[1]});
    } else if (sh.size() == 3 && is_head_axis(ax[0])) {  // (head, query, key): a head's map
        for (std::size_t h = 0; h < sh[0]; ++h) {
            Slice sl{json::object(), h * sh[1] * sh[2], sh[1], sh[2], sh[2], 1, ax[1], ax[2]};
            if (sh[0] > 1) sl.at[ax[0]] = h;
            out.push_back(std::move(sl));
        }
    } else if (sh.size() == 3 && is_head_axis(ax[1])) {  // (query, head, d_head): a head's rows, or the heads side by side
        for (std::size_t h = 0; h < sh[1]; ++h) {
            Slice sl{json::object(), h * sh[2], sh[0], sh[2], sh[1] * sh[2], 1, ax[0], ax[2]};
            if (sh[1] > 1) sl.at[ax[1]] = h;
            out.push_back(std::move(sl));
        }
        if (sh[1] > 1) out.push_back({json::object(), 0, sh[0], sh[1] * sh[2], sh[1] * sh[2], 1, ax[0], ""});  // concatenated
    }
    return out;
}

// The numbers of `a` against `values` (row-major, as `a` prints them), each also within its `slack` when
// there is one (as many as the values).
void compare(const PrintedArray& a, const std::vector<float>& values, Placement& p, const std::vector<float>* slack = nullptr) {
    p.agree = p.total = 0;
    p.max_error = 0;
    std::size_t k = 0;
    for (const auto& row : a.rows)
        for (const auto& n : row) {
            const float x = values[k];
            const float extra = slack ? (*slack)[k] : 0.0f;
            ++k;
            ++p.total;
            if (agrees_at_precision(x, static_cast<float>(n.value), n.decimals) ||
                (extra > 0 && std::fabs(static_cast<double>(x) - n.value) <= 0.5 * std::pow(10.0, -n.decimals) + extra))
                ++p.agree;
            p.max_error = std::max(p.max_error, std::fabs(static_cast<double>(x) - n.value));
        }
    p.computed.assign(values.begin(), values.end());
}

}  // namespace

std::string word_role(const std::string& name) {
    std::vector<std::string> words;
    std::string w;
    for (char c : name + " ") {
        if (std::isalpha(static_cast<unsigned char>(c))) {
            w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!w.empty()) {
            words.push_back(std::move(w));
            w.clear();
        }
    }
    if (words.size() < 2 && (words.empty() || words[0].size() < 3)) return "";  // "Q", "x": the letters' own rules
    auto in = [](const std::string& word, std::initializer_list<const char*> set) {
        return std::any_of(set.begin(), set.end(), [&](const char* x) { return word == x; });
    };
    auto has = [&](std::initializer_list<const char*> set) {
        return std::any_of(words.begin(), words.end(), [&](const std::string& x) { return in(x, set); });
    };
    std::string role;  // the first of query, key, value the name says
    for (const std::string& x : words) {
        if (in(x, {"q", "query", "queries"})) role = "Q";
        else if (in(x, {"k", "key", "keys"})) role = "K";
        else if (in(x, {"v", "value", "values"})) role = "V";
        if (!role.empty()) break;
    }
    const bool weight = has({"weight", "weights", "projection", "proj"}) || (words[0] == "w" && words.size() >= 2);
    if (has({"attention", "softmax", "probabilities", "probs"})) return has({"score", "scores", "logits"}) ? "S" : "A";
    if (weight && !role.empty()) return "W_" + role;
    if (has({"weighted", "sum", "mean", "shape", "size", "dimension"})) return "";  // a quantity about an array, not the array
    for (const std::string& x : words) {
        if (in(x, {"input", "inputs", "embedding", "embeddings"})) return "X";
        if (in(x, {"query", "queries", "key", "keys", "value", "values"})) return role;
        if (in(x, {"score", "scores", "logits"})) return has({"scaled"}) ? "tildeS" : "S";
        if (in(x, {"output", "outputs", "context"})) return "Z";
    }
    return "";
}

namespace {

std::string hint_of(const std::string& name) {
    std::string n;
    for (char c : name)
        if (c != '\\' && c != '{' && c != '}' && c != '^' && c != '_' && c != ' ' && c != '$') n += c;
    // a LayerNorm's statistics by their symbols or words (before a head's number is taken off: σ² is no σ)
    if (n == "sigma2" || n == "\xCF\x83\xC2\xB2" || n == "\xCF\x83" "2" || n == "var" || n == "variance" || n == "Var" || n == "Variance")
        return "ln1.hook_var";
    if (n == "mu" || n == "\xCE\xBC" || n == "mean" || n == "Mean") return "ln1.hook_mean";
    if (n == "sigma" || n == "\xCF\x83" || n == "std" || n == "Std") return "ln1.hook_scale";
    if (n == "standardized" || n == "hatx" || n == "xhat" || n == "Standardized") return "ln1.hook_standardized";
    // a head's array, "Z_1", "Q_2": its step's
    while (n.size() > 1 && std::isdigit(static_cast<unsigned char>(n.back()))) n.pop_back();
    if (n == "Q" || n == "q" || n == "Query" || n == "query") return "hook_q";
    if (n == "K" || n == "k" || n == "Key" || n == "key") return "hook_k";
    if (n == "V" || n == "v" || n == "Value" || n == "value") return "hook_v";
    if (n == "S" || n == "QKT" || n == "QKtop" || n == "scores") return "hook_scores_raw";
    if (n == "tildeS" || n == "S'" || n == "hatS") return "hook_scores_scaled";
    if (n == "A" || n == "P" || n == "weights" || n == "alpha") return "hook_pattern";
    if (n == "Z" || n == "z" || n == "O" || n == "output") return "hook_z";
    if (n == "LN" || n == "LN1" || n == "LN2" || n == "LayerNorm" || n == "norm" || n == "Norm" || n == "normalized" || n == "Normalized")
        return "hook_normalized";  // the LayerNorm's output, after γ and β (equal to x̂ when γ = 1, β = 0)
    const std::string role = word_role(name);  // "Key for Input", "attention weights"
    return role.empty() || role == "X" || role[0] == 'W' ? "" : hint_of(role);
}

}  // namespace

std::string step_hint(const std::string& name) {
    const std::string whole = hint_of(name);
    if (!whole.empty()) return whole;
    // a token's row or the whole by another subscript: "v_{\text{ring}}", "Z_{ring}": the letter's step
    const std::size_t sub = name.find('_');
    return sub == std::string::npos || sub == 0 ? "" : hint_of(name.substr(0, sub));
}

namespace {

// A name that says its numbers are sums: a word "sum" or "sums" ("All row sums", "row_sums", "Sum").
bool names_sums(const std::string& name) {
    std::string w;
    for (char c : name + " ") {
        if (std::isalpha(static_cast<unsigned char>(c))) {
            w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
            if (w == "sum" || w == "sums") return true;
            w.clear();
        }
    }
    return false;
}

// A name that says its array is printed transposed: "K^T", "K^\\top", "K.T", "Kᵀ", "K_transposed", "keys transposed".
bool names_transpose(const std::string& name) {
    for (const char* t : {"^T", "^{T}", "^\\top", "^{\\top}", ".T", "\xE1\xB5\x80", "transpose", "Transpose"})
        if (name.find(t) != std::string::npos) return true;
    return false;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return !tail.empty() && s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// On a tie in agreement, the nearer; on a tie in both, the step the array's name points to, else the earlier (kept).
bool better(const Placement& a, const Placement& b, const std::string& hint) {
    if (a.agree != b.agree) return a.agree > b.agree;
    if (a.max_error != b.max_error) return a.max_error < b.max_error;
    return ends_with(a.step, hint) && !ends_with(b.step, hint);
}

}  // namespace

namespace {

// Weighted value vectors (a.weighted: "0.07 * [1, 1, 3] = [..]", a line per key) placed on a row of Z as its
// terms: for each attention block, head h and query i, the keys' A[h, i, j]·V[j, kv(h), :], compared as the
// article prints them (a row per key).
Placement place_weighted(const PrintedArray& a, const Trace& trace) {
    Placement best;
    const std::size_t pr = a.rows.size(), pc = a.rows[0].size();
    std::vector<float> buf(pr * pc);
    for (const Step& z : trace.steps) {
        if (!ends_with(z.name, "attn.hook_z") || z.shape.size() != 3) continue;  // (query, head, d_head)
        const std::string prefix = z.name.substr(0, z.name.size() - std::string("hook_z").size());
        const Step* pat = trace.find(prefix + "hook_pattern");  // (head, query, key)
        const Step* val = trace.find(prefix + "hook_v");        // (key, kv_head, d_head)
        if (!pat || !val || pat->shape.size() != 3 || val->shape.size() != 3 || !pat->holds_values() || !val->holds_values()) continue;
        const std::size_t H = pat->shape[0], T = pat->shape[1], K = pat->shape[2], KV = val->shape[1], D = val->shape[2];
        if (K != pr || D != pc || KV == 0 || H % KV) continue;
        const StepValues A = values_of(trace, *pat), V = values_of(trace, *val);
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < T; ++i) {
                const std::size_t kv = h / (H / KV);
                for (std::size_t j = 0; j < K; ++j)
                    for (std::size_t c = 0; c < D; ++c)
                        buf[j * D + c] = static_cast<float>(static_cast<double>(A->ptr()[(h * T + i) * K + j]) *
                                                            V->ptr()[(j * KV + kv) * D + c]);
                Placement p;
                compare(a, buf, p);
                if (!best.step.empty() && !better(p, best, "")) continue;
                p.step = z.name;
                p.at = H > 1 ? json{{"query", i}, {"head", h}} : json{{"query", i}};
                p.row_axis = "key";
                p.of = "terms";
                best = std::move(p);
            }
    }
    return best;
}

}  // namespace

Placement place_array(const PrintedArray& a, const Trace& trace, const std::string& only, const Slack* slack) {
    Placement best;
    if (a.elided || a.rows.empty()) return best;
    if (a.weighted) return place_weighted(a, trace);
    const std::size_t pr = a.rows.size(), pc = a.rows[0].size();
    for (const auto& r : a.rows)
        if (r.size() != pc) return best;
    const bool scalar = pr * pc == 1;
    const std::string hint = step_hint(a.name);
    // "Z_2", "head 2": the head a name numbers from 1 (0 numbers the first too)
    int head_hint = -1;
    if (!a.name.empty() && std::isdigit(static_cast<unsigned char>(a.name.back()))) head_hint = std::max(0, a.name.back() - '0' - 1);
    std::vector<float> buf, buf_slack;
    std::vector<std::string> whole_in;  // the steps with a selection it agrees with whole
    for (const Step& s : trace.steps) {
        if (s.recorded != Record::full || s.shape.empty() || s.axes.size() != s.shape.size()) continue;
        if (!s.holds_values() && !is_derived(s)) continue;
        if (!only.empty() && !ends_with(s.name, only)) continue;
        const StepValues v = values_of(trace, s);
        const float* x = v->ptr();
        const auto sl_it = slack ? slack->find(s.name) : Slack::const_iterator{};
        const float* y = slack && sl_it != slack->end() && sl_it->second.size() == v->size() ? sl_it->second.data() : nullptr;
        // offset_at(k): the step's flat offset of the selection's k-th number
        auto consider = [&](json at, auto offset_at, std::size_t n, const Slice& sl, bool transposed = false) {
            buf.resize(n);
            buf_slack.resize(n);
            for (std::size_t k = 0; k < n; ++k) {
                buf[k] = x[offset_at(k)];
                buf_slack[k] = y ? y[offset_at(k)] : 0.0f;
            }
            Placement p;
            compare(a, buf, p, y ? &buf_slack : nullptr);
            p.step = s.name;
            p.row_axis = sl.row_axis;
            p.col_axis = sl.col_axis;
            p.transposed = transposed;
            // printed transposed without a name saying so: only where most numbers agree, or, square, every one
            // (a chance fit otherwise: a row of ones against a step of row sums)
            if (transposed && !names_transpose(a.name) && !(pr == pc ? p.whole() : 2 * p.agree > p.total)) return;
            if (p.whole() && (whole_in.empty() || whole_in.back() != s.name)) whole_in.push_back(s.name);
            // placed by name (`only`): the head the name numbers ("Z_2": the second) before any number agreeing
            const bool named_head = head_hint >= 0 && at.contains("head") && at["head"] == head_hint;
            const bool best_named_head = head_hint >= 0 && best.at.contains("head") && best.at["head"] == head_hint;
            if (best.step.empty() || (!only.empty() && named_head != best_named_head ? named_head : better(p, best, hint))) {
                p.at = std::move(at);
                best = std::move(p);
            }
        };
        for (const Slice& sl : slices_of(s)) {
            auto at_ij = [&](std::size_t i, std::size_t j) { return sl.offset + i * sl.row_stride + j * sl.col_stride; };
            if (!scalar && pr == sl.rows && pc == sl.cols)  // the whole slice
                consider(sl.at, [&](std::size_t k) { return at_ij(k / pc, k % pc); }, pr * pc, sl);
            // the whole slice printed transposed (Kᵀ, a key per column): by its shape, or, square, by its name
            if (!scalar && pr == sl.cols && pc == sl.rows && pr > 1 && pc > 1 && !sl.row_axis.empty() && !sl.col_axis.empty() &&
                (pr != pc || names_transpose(a.name)))
                consider(sl.at, [&](std::size_t k) { return at_ij(k % pc, k / pc); }, pr * pc,
                         Slice{sl.at, sl.offset, sl.cols, sl.rows, sl.col_stride, sl.row_stride, sl.col_axis, sl.row_axis}, true);
            if (!scalar && pr == 1 && pc == sl.cols && sl.rows > 1 && !sl.row_axis.empty())  // a row
                for (std::size_t i = 0; i < sl.rows; ++i) {
                    json at = sl.at;
                    at[sl.row_axis] = i;
                    consider(at, [&](std::size_t k) { return at_ij(i, k); }, pc, Slice{{}, 0, 1, 0, 0, 1, "", sl.col_axis});
                }
            if (!scalar && pr == 1 && pc == sl.rows && sl.cols > 1 && !sl.col_axis.empty())  // a column
                for (std::size_t j = 0; j < sl.cols; ++j) {
                    json at = sl.at;
                    at[sl.col_axis] = j;
                    consider(at, [&](std::size_t k) { return at_ij(k, j); }, pc, Slice{{}, 0, 1, 0, 0, 1, "", sl.row_axis});
                }
            if (scalar && !sl.col_axis.empty())  // a cell
                for (std::size_t i = 0; i < sl.rows; ++i)
                    for (std::size_t j = 0; j < sl.cols; ++j) {
                        json at = sl.at;
                        if (!sl.row_axis.empty()) at[sl.row_axis] = i;
                        at[sl.col_axis] = j;
                        consider(at, [&](std::size_t) { return at_ij(i, j); }, 1, Slice{});
                    }
        }
    }
    // the heads' patterns averaged (the weights nn.MultiheadAttention returns by default): the mean across the
    // heads, whole or a query's row (of: head_mean), as the check reduces them (a double sum over the heads, / H)
    if (!scalar)
        for (const Step& s : trace.steps) {
            if (!ends_with(s.name, "attn.hook_pattern") || s.recorded != Record::full || s.shape.size() != 3 || s.axes.size() != 3 ||
                s.axes[0] != "head" || s.shape[0] < 2 || !s.holds_values())
                continue;
            if (!only.empty() && !ends_with(s.name, only)) continue;
            const std::size_t H = s.shape[0], T = s.shape[1], K = s.shape[2];
            if (pc != K || (pr != T && pr != 1)) continue;
            const StepValues v = values_of(trace, s);
            std::vector<float> mean(T * K);
            for (std::size_t o = 0; o < T * K; ++o) {
                double acc = 0;
                for (std::size_t h = 0; h < H; ++h) acc += v->ptr()[h * T * K + o];
                mean[o] = static_cast<float>(acc / static_cast<double>(H));
            }
            auto consider_mean = [&](json at, const float* first, std::size_t n, std::string row_axis) {
                buf.assign(first, first + n);
                Placement p;
                compare(a, buf, p);
                p.step = s.name;
                p.at = std::move(at);
                p.row_axis = std::move(row_axis);
                p.col_axis = "key";
                p.of = "head_mean";
                if (best.step.empty() || better(p, best, hint)) best = std::move(p);
            };
            if (pr == T) consider_mean(json::object(), mean.data(), T * K, "query");
            if (pr == 1 && T > 1)
                for (std::size_t i = 0; i < T; ++i) consider_mean(json{{"query", i}}, mean.data() + i * K, K, "");
        }
    // a vector named as sums ("All row sums", "sum(dim=-1)"): each 2-D selection's row sums (of: row_sum)
    if (!scalar && pr == 1 && names_sums(a.name))
        for (const Step& s : trace.steps) {
            if (s.recorded != Record::full || s.shape.empty() || s.axes.size() != s.shape.size()) continue;
            if (!s.holds_values() && !is_derived(s)) continue;
            if (!only.empty() && !ends_with(s.name, only)) continue;
            const StepValues v = values_of(trace, s);
            for (const Slice& sl : slices_of(s)) {
                if (sl.rows != pc || sl.cols < 2 || sl.row_axis.empty()) continue;
                buf.assign(pc, 0.0f);
                for (std::size_t i = 0; i < sl.rows; ++i) {
                    double sum = 0;
                    for (std::size_t j = 0; j < sl.cols; ++j) sum += v->ptr()[sl.offset + i * sl.row_stride + j * sl.col_stride];
                    buf[i] = static_cast<float>(sum);
                }
                Placement p;
                compare(a, buf, p);
                p.step = s.name;
                p.at = sl.at;
                p.row_axis = "";
                p.col_axis = sl.row_axis;
                p.of = "row_sum";
                if (best.step.empty() || better(p, best, hint)) best = std::move(p);
            }
        }
    best.whole_steps = whole_in.size();
    return best;
}

}  // namespace attntrace
