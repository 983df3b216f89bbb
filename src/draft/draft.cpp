#include "draft/draft.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <memory>

#include <fmt/format.h>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "draft/chain.hpp"
#include "draft/masks.hpp"
#include "draft/place.hpp"
#include "draft/prose_rows.hpp"
#include "draft/shapes.hpp"
#include "draft/start.hpp"
#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

namespace {

constexpr std::size_t kNoArray = std::numeric_limits<std::size_t>::max();
// An example's numbers are printed near its start: tables further than this after it are another example's
// (the numbers of its sentences between them not counted, up to kProsePerTable of them a table).
constexpr std::size_t kMaxWindow = 48;
constexpr std::size_t kProsePerTable = 8;
// An array printed this close above an example's first weight may be computed from it ("Q = [..], where W_Q").
constexpr std::size_t kNearWeightsLines = 6;
// A table is split into its rows (a claim per row) when it has at most this many: a worked example's size.
constexpr std::size_t kMaxSplit = 8;
// The runs one start may give (with and without a mask, and one more): a bound on the searches, not a count
// any tutorial reaches.
constexpr std::size_t kMaxRunsPerStart = 3;
// A table that makes a further run from the same inputs an example: a few numbers agree by chance.
constexpr std::size_t kMinTableNumbers = 4;

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

// One example: a start, the arrays after it that its run may print, and the best run found.
struct Example {
    Start start;
    std::vector<std::size_t> candidates;
    std::vector<DraftTrial> trials;
    std::vector<std::string> reasons;
    Refined best;
    Conventions conventions;            // best's
    std::vector<Placement> claims;      // per candidate: the placement claimed, or one with an empty step
    // A table no selection holds whole, whose rows print different steps ("v_ring 0 0 2 2 / z_ring 1.72 ..."):
    // each row placed on its own (the candidate's index, the row as an array, where it was placed).
    struct RowClaim {
        std::size_t candidate;
        PrintedArray row;
        Placement placement;
    };
    std::vector<RowClaim> row_claims;
    std::size_t explained = 0;          // candidates claimed
    std::string first_error;            // the first convention's refusal, when none ran
};

// The same numbers printed twice, each at its own precision: X in a notebook's source ("0.0") and its print
// below ("0."), equal within half a unit of the coarser of the two places.
bool same_numbers(const PrintedArray& a, const PrintedArray& b) {
    if (a.rows.size() != b.rows.size()) return false;
    for (std::size_t r = 0; r < a.rows.size(); ++r) {
        if (a.rows[r].size() != b.rows[r].size()) return false;
        for (std::size_t c = 0; c < a.rows[r].size(); ++c) {
            const PrintedNumber &x = a.rows[r][c], &y = b.rows[r][c];
            if (std::isinf(x.value) || std::isinf(y.value)) {
                if (x.value != y.value) return false;
                continue;
            }
            if (std::fabs(x.value - y.value) > 0.5 * std::pow(10.0, -std::min(x.decimals, y.decimals)) * (1 + 1e-9)) return false;
        }
    }
    return true;
}

// The arrays an example starting at `s` may print: after its first input, not its inputs, not claimed by an
// earlier example, up to where a named array is printed again with other numbers (the next example's Q).
std::vector<std::size_t> window(const Article& art, const Start& s, const std::vector<bool>& used, std::vector<std::string>& reasons) {
    std::vector<std::size_t> out;
    const auto& A = art.arrays;
    const std::size_t first = s.first();
    if (s.kind == StartKind::mask) return {first};  // the printed mask is what its run claims
    // X's run with weights prints nothing before its first weight is given: what an article prints between X
    // and it is another run's (X alone), unless it is next to it ("Q = [..], where W_Q = [..]")
    std::size_t first_weight = kNoArray;
    for (std::size_t r = 1; r < s.inputs.size(); ++r)
        if (s.inputs[r] != kNoArray) first_weight = std::min(first_weight, s.inputs[r]);
    auto printed_before_weights = [&](std::size_t i) {
        if (s.kind != StartKind::embed || s.identity || first_weight == kNoArray || i >= first_weight) return false;
        if (s.inputs[0] != kNoArray && same_numbers(A[i], A[s.inputs[0]])) return false;  // X printed again
        if (A[i].form == PrintedForm::code) return false;  // the mask a module's code builds, above its weights
        const ArticlePlace &a = A[i].place, &w = A[first_weight].place;
        return a.cell != w.cell || w.line > a.line + kNearWeightsLines;
    };
    std::size_t tables = 0;
    for (std::size_t i = first + (s.kind == StartKind::positions ? 0 : 1);
         i < A.size() && tables <= kMaxWindow && i <= first + kMaxWindow * kProsePerTable; ++i) {
        const auto& a = A[i];
        tables += is_table(a);
        // a norm worked by hand names its numbers in prose: "μ = 2.65, σ ≈ 0.48"
        const bool norm_number = s.kind == StartKind::norm && a.form == PrintedForm::prose && step_hint(a.name).rfind("ln1.", 0) == 0;
        // a table of positions is what its run computes: claimed, not read
        const bool read = std::find(s.inputs.begin(), s.inputs.end(), i) != s.inputs.end() &&
                          !(s.kind == StartKind::positions && i == s.inputs[0]);
        // an array named as a weight is an input or nothing: never a claim on a step the run computes
        if ((!is_table(a) && !norm_number) || used[i] || read || weight_role(a.name) >= 0) continue;
        if (printed_before_weights(i)) continue;
        // X printed again explains nothing of a run on X alone (the run with weights claims it)
        if (s.kind == StartKind::embed && s.identity && s.inputs[0] != kNoArray && same_numbers(a, A[s.inputs[0]])) continue;
        bool again = false;
        // (another example's array is not this one's; nor one printed before its weights)
        for (std::size_t j = first; j < i && !again && !a.name.empty(); ++j)
            again = !used[j] && !printed_before_weights(j) && is_table(A[j]) && bare(A[j].name) == bare(a.name) && A[j].shape == a.shape && !same_numbers(A[j], a);
        if (again) {
            reasons.push_back(fmt::format("the example ends before {} ({} printed again with other numbers)", a.place.describe(), a.name));
            break;
        }
        out.push_back(i);
    }
    return out;
}

// The numbers the example's sentences print (two decimals or more, between its first input and its last
// array): placed on no step by the search, but a convention whose run gives more of them exactly, each on
// one step only, agrees with more of the article ("e^2.0 = 7.389": the softmax's exp without the max shift).
std::vector<std::size_t> example_prose(const Article& art, const Start& s, const std::vector<std::size_t>& candidates,
                                       const std::vector<bool>& used) {
    constexpr std::size_t kMaxProse = 64;  // a few sentences' numbers: each costs a placement per convention
    std::vector<std::size_t> out;
    if (candidates.empty()) return out;
    for (std::size_t i = s.first() + 1; i < candidates.back() && out.size() < kMaxProse; ++i) {
        const PrintedArray& a = art.arrays[i];
        if (a.form == PrintedForm::prose && !used[i] && a.rows[0][0].decimals >= 2) out.push_back(i);
    }
    return out;
}

// How many of `prose` the lesson's run gives exactly, each on one step only (0 when it does not run).
std::size_t prose_given(const OrderedJson& lesson, const Article& art, const std::vector<std::size_t>& prose) {
    if (prose.empty()) return 0;
    std::unique_ptr<Evaluation> e;
    try {
        e = run_lesson(lesson);
    } catch (const InputError&) {
        return 0;
    }
    std::size_t n = 0;
    for (std::size_t i : prose) {
        const Placement p = place_array(art.arrays[i], e->exact);
        n += !p.step.empty() && p.whole() && p.whole_steps == 1;
    }
    return n;
}

// An array no convention reproduces, claimed where its name or its form says it belongs (a printed A on the
// weights, rows that sum to 1 on the weights): the check then says how far it is.
std::string claimed_step(const PrintedArray& a) {
    const std::string hint = step_hint(a.name);
    if (!hint.empty()) return hint;
    return sums_to_one(a) ? "hook_pattern" : "";
}

// The rows of an unexplained table, each placed on its own: claimed when every number of it agrees, and
// when at least half its rows are so (a table of rows that print different steps). Fewer is the table of
// another convention whose last row this run shares: a causal run's last row is its unmasked one's.
void split_rows(const PrintedArray& a, std::size_t k, const Evaluation& e, Example& ex) {
    if (a.rows.size() < 2 || a.rows.size() > kMaxSplit) return;
    const std::size_t before = ex.row_claims.size();
    for (std::size_t r = 0; r < a.rows.size(); ++r) {
        PrintedArray row = a;
        row.rows = {a.rows[r]};
        row.shape = {a.rows[r].size()};
        row.row_labels.clear();
        if (r < a.row_labels.size() && !a.row_labels[r].empty()) row.name = a.row_labels[r];
        Placement p = place_array(row, e.exact);
        if (e.document) {
            Placement q = place_array(row, *e.document);
            if (q.agree > p.agree) p = std::move(q);
        }
        // every number: a row's few numbers agree with some row by chance more often than a table's
        if (!p.step.empty() && p.total > 1 && p.whole()) ex.row_claims.push_back({k, std::move(row), std::move(p)});
    }
    if (2 * (ex.row_claims.size() - before) < a.rows.size()) ex.row_claims.resize(before);
}

// A printed mask's example: every mask its tokens allow, the one agreeing with the most cells kept; its
// claims the mask whole, or a row per label, whatever their verdicts.
Example search_mask(const Article& art, Start start) {
    Example ex;
    ex.start = std::move(start);
    const Start& s = ex.start;
    const PrintedArray& a = s.drawn ? *s.drawn : art.arrays[s.inputs[0]];
    ex.reasons = s.reasons;
    ex.candidates = {s.inputs[0]};
    bool have = false;
    for (const Conventions& c : conventions_for(art, s)) {
        Refined r;
        r.lesson = base_lesson(art, s, c);
        r.score = score_mask(r.lesson, a);
        ex.trials.push_back({c.describe(s.kind), r.score.agree, r.score.total});
        if (!r.score.ran && ex.first_error.empty()) ex.first_error = r.score.error;
        if (r.score.ran && (!have || r.score.agree > ex.best.score.agree)) {
            ex.conventions = c;
            ex.best = std::move(r);
            have = true;
        }
    }
    ex.claims.assign(1, Placement{});
    if (!have) return ex;
    ex.claims[0] = ex.best.score.placements[0];
    if (ex.claims[0].step.empty()) {
        std::unique_ptr<Evaluation> e = run_lesson(ex.best.lesson);
        const auto tokens = ex.best.lesson["tokens"].get<std::vector<std::string>>();
        const std::vector<std::size_t> rows = rows_by_label(a, tokens);
        const std::vector<Placement> placed = place_mask_rows(a, e->exact, rows);
        for (std::size_t r = 0; r < placed.size(); ++r) {
            if (placed[r].step.empty()) continue;
            PrintedArray row = a;
            row.rows = {a.rows[r]};
            row.shape = {a.rows[r].size()};
            row.row_labels.clear();
            row.name = a.row_labels[r];
            ex.row_claims.push_back({0, std::move(row), placed[r]});
        }
    }
    ex.explained = !ex.claims[0].step.empty() || !ex.row_claims.empty();
    return ex;
}

// How many numbers a drafted lesson takes from the article as `given` (a part of a step: its values only).
std::size_t given_numbers(const OrderedJson& lesson) {
    if (!lesson.contains("given")) return 0;
    std::size_t n = 0;
    std::function<void(const OrderedJson&)> count = [&](const OrderedJson& v) {
        if (v.is_array())
            for (const OrderedJson& x : v) count(x);
        else if (v.is_object() && v.contains("values"))
            count(v["values"]);
        else if (v.is_number() || v.is_string())
            ++n;
    };
    for (const auto& [name, v] : lesson["given"].items()) count(v);
    return n;
}

// A step the article's chain gives (refine) whose printed arrays another convention's run reproduces whole,
// without giving them, is no error of the article's but that run's numbers (a tutorial's unmasked weights,
// given to its masked run): their own agreement is not counted for the convention that gives them.
template <class Trial>
void discount_other_runs(std::vector<Trial>& trials) {
    auto chain_of = [](const Refined& r) {
        std::set<std::string> chain;
        for (const std::string& s : r.steps)
            if (s.rfind("given ", 0) == 0) chain.insert(s.substr(6));
        return chain;
    };
    for (Trial& t : trials) {
        const Refined& r = t.refined;
        const std::set<std::string> chain = chain_of(r);
        if (!r.score.ran || chain.empty()) continue;
        std::vector<std::size_t> given;  // the candidates placed on a given step
        std::size_t own = 0;
        for (std::size_t k = 0; k < r.score.placements.size(); ++k)
            if (const Placement& p = r.score.placements[k]; !p.step.empty() && chain.count(step_leaf(p.step))) given.push_back(k), own += p.agree;
        if (given.empty()) continue;
        const bool elsewhere = std::any_of(trials.begin(), trials.end(), [&](const Trial& u) {
            if (&u == &t || !u.refined.score.ran || !chain_of(u.refined).empty()) return false;
            return std::all_of(given.begin(), given.end(), [&](std::size_t k) { return u.refined.score.placements[k].whole(); });
        });
        if (elsewhere) t.agree -= std::min(t.agree, own);
    }
}

// Whether a placement has -inf (or +inf) wherever the array prints it: a printed -inf is a mask's, and the
// masked scores of another run are not this run's scores because their other cells agree.
bool infinities_agree(const PrintedArray& a, const Placement& p) {
    std::size_t k = 0;
    for (const auto& row : a.rows)
        for (const PrintedNumber& n : row) {
            if (std::isinf(n.value) && (k >= p.computed.size() || p.computed[k] != n.value)) return false;
            ++k;
        }
    return true;
}

Example search(const Article& art, Start start, const std::vector<bool>& used, const std::vector<bool>& starts_with_v) {
    if (start.kind == StartKind::mask) return search_mask(art, std::move(start));
    Example ex;
    ex.start = std::move(start);
    const Start& s = ex.start;
    ex.reasons = s.reasons;
    ex.candidates = window(art, s, used, ex.reasons);
    const std::vector<std::size_t> prose = example_prose(art, s, ex.candidates, used);
    struct Trial {
        Conventions conventions;
        Refined refined;
        std::size_t agree = 0;  // its printed numbers agreeing, its prose numbers given exactly among them
        std::size_t taken = 0;  // its numbers given by the article (given_numbers)
    };
    std::vector<Trial> trials;
    for (const Conventions& c : conventions_for(art, s)) {
        Refined r = refine(base_lesson(art, s, c), art, ex.candidates);
        const std::size_t in_prose = r.score.ran ? prose_given(r.lesson, art, prose) : 0;
        const std::size_t agree = r.score.agree + in_prose, taken = given_numbers(r.lesson);
        if (!r.score.ran && ex.first_error.empty()) ex.first_error = r.score.error;
        trials.push_back({c, std::move(r), agree, taken});
    }
    discount_other_runs(trials);
    bool have = false;
    std::size_t best = 0;
    for (std::size_t t = 0; t < trials.size(); ++t) {
        const Trial& tr = trials[t];
        const Refined& r = tr.refined;
        ex.trials.push_back({tr.conventions.describe(s.kind) + (r.steps.empty() ? "" : ", " + join(r.steps)), tr.agree,
                             r.score.total + prose.size()});
        // the most printed numbers agreeing; on a tie, the fewer numbers taken from the article as given (a
        // given step explains its own numbers by fiat, a rounding does not), then the fewer steps taken from
        // the article's chain and rounding
        const Trial& b = trials[best];
        if (r.score.ran && (!have || tr.agree > b.agree ||
                            (tr.agree == b.agree && (tr.taken < b.taken ||
                                                     (tr.taken == b.taken && r.steps.size() < b.refined.steps.size()))))) {
            best = t;
            have = true;
        }
    }
    if (have) {
        ex.conventions = trials[best].conventions;
        ex.best = std::move(trials[best].refined);
    }
    ex.claims.assign(ex.candidates.size(), Placement{});
    if (!have) return ex;
    std::unique_ptr<Evaluation> e = run_lesson(ex.best.lesson);
    // Claimed by value anywhere in the window; by name or form only before the first array the run does not
    // explain (an example is a chain: past an array it cannot explain, another example may have begun).
    bool chain = true;
    for (std::size_t k = 0; k < ex.candidates.size(); ++k) {
        const std::size_t i = ex.candidates[k];
        const Placement& p = ex.best.score.placements[k];
        if (!p.step.empty() && p.total > 0 && 2 * p.agree >= p.total && infinities_agree(art.arrays[i], p)) {
            ex.claims[k] = p;
        } else if (const std::string step = claimed_step(art.arrays[i]); chain && !step.empty() && !starts_with_v[i]) {
            Placement q = place_array(art.arrays[i], e->exact, step);
            // "Normalized" where the norm's γ and β are not printed (not computable): x̂, the values before them
            if (q.step.empty() && step == "hook_normalized") q = place_array(art.arrays[i], e->exact, "hook_standardized");
            if (!q.step.empty() && q.total == art.arrays[i].count()) ex.claims[k] = std::move(q);
        }
        if (ex.claims[k].step.empty()) split_rows(art.arrays[i], k, *e, ex);
        const bool explained = !ex.claims[k].step.empty() ||
                               std::any_of(ex.row_claims.begin(), ex.row_claims.end(), [&](const auto& r) { return r.candidate == k; });
        ex.explained += explained;
        chain = chain && explained;
    }
    return ex;
}

// Whether an example's run reproduces a printed table by value (every number of it, at least
// kMinTableNumbers of them): what makes another run from an accepted example's inputs an example too.
bool reproduces_a_table(const Article& art, const Example& ex) {
    for (std::size_t k = 0; k < ex.candidates.size(); ++k) {
        const PrintedArray& a = art.arrays[ex.candidates[k]];
        const Placement& p = ex.best.score.placements[k];
        if (!ex.claims[k].step.empty() && is_table(a) && a.count() >= kMinTableNumbers && p.whole())
            return true;
    }
    return false;
}

// A printed array some of whose numbers disagree, claimed again a row at a time (a vector: a cell at a
// time), so that the check says which rows are right: up to kMaxSplit of them.

void split_claim(const PrintedArray& a, const Placement& p, std::map<std::string, int>& ids, OrderedJson& claims) {
    const bool by_row = a.rows.size() > 1;
    const std::string& axis = by_row ? p.row_axis : p.col_axis;
    const std::size_t n = by_row ? a.rows.size() : a.rows[0].size();
    if (axis.empty() || n > kMaxSplit || (!by_row && n < 2)) return;
    const std::string base = a.name.empty() ? step_leaf(p.step) : bare(without_markup(a.name));
    for (std::size_t i = 0; i < n; ++i) {
        const bool labelled = by_row && i < a.row_labels.size() && !a.row_labels[i].empty();
        OrderedJson c = {{"id", claim_id(base + "-" + (labelled ? a.row_labels[i] : std::to_string(i + 1)), ids)}, {"step", p.step}};
        OrderedJson at = OrderedJson::parse(p.at.dump());
        at[axis] = i;
        c["at"] = at;
        PrintedArray part;
        if (by_row) part.rows = {a.rows[i]};
        else part.rows = {{a.rows[0][i]}};
        c["decimals"] = decimals_of(part);
        c["values"] = values_json(part);
        c["expect"] = "agrees";
        c["quote"] = a.quote;
        c["note"] = fmt::format("{} {} of the array at {}", by_row ? "row" : "number", i + 1, a.place.describe());
        claims.push_back(std::move(c));
    }
}

void set_verdicts(Draft& d);

// The lesson of an accepted example: its claims, each with the verdict the check gives.
Draft write_example(const Article& art, Example& ex, const std::string& id, std::size_t text_end, std::vector<bool>& used) {
    Draft d;
    d.start = ex.start.describe();
    d.reasons = std::move(ex.reasons);
    d.reasons.push_back(fmt::format("starts from {}; conventions: {}", ex.start.describe(), ex.conventions.describe(ex.start.kind)));
    for (auto& why : ex.best.reasons) d.reasons.push_back(std::move(why));
    d.trials = std::move(ex.trials);
    d.lesson = ex.best.lesson;
    d.lesson["id"] = id;
    for (std::size_t i : ex.start.inputs)
        if (i != kNoArray) used[i] = true;
    if (ex.start.token_list != kNoArray) used[ex.start.token_list] = true;  // read as the tokens
    OrderedJson claims = OrderedJson::array();
    std::map<std::string, int> ids;
    struct Split {
        std::size_t claim;
        const PrintedArray* array;
        Placement placement;
    };
    std::vector<Split> splits;  // claims to split into rows if the check finds them wrong
    for (std::size_t k = 0; k < ex.candidates.size(); ++k) {
        const Placement& p = ex.claims[k];
        if (p.step.empty()) continue;
        const PrintedArray& a = art.arrays[ex.candidates[k]];
        used[ex.candidates[k]] = true;
        const bool terms = p.of == "terms";
        OrderedJson c = {{"id", claim_id(terms ? "weighted-values" : a.name.empty() ? step_leaf(p.step) : bare(without_markup(a.name)), ids)}, {"step", p.step}};
        if (!p.at.empty()) c["at"] = OrderedJson::parse(p.at.dump());
        if (!p.of.empty()) c["of"] = p.of;
        c["decimals"] = decimals_of(a);
        c["values"] = !terms || a.rows.size() > 1 ? values_json(a) : OrderedJson::array({values_json(a)});
        if (p.transposed) c["axes"] = OrderedJson::array({p.row_axis, p.col_axis});  // Kᵀ: printed d_head x key
        c["expect"] = "agrees";  // replaced below by the verdict the check gives
        c["quote"] = a.quote;
        c["note"] = "drafted from " + a.place.describe() + (a.legend.empty() ? "" : ", read " + a.legend);
        d.reasons.push_back(fmt::format("claim {}: the array at {} on {}{}: {} of {} printed numbers agree{}", c["id"].get<std::string>(),
                                        a.place.describe(), p.step, p.at.empty() ? "" : " " + p.at.dump(), p.agree, p.total,
                                        2 * p.agree >= p.total ? "" : " (placed by its name or form, not its numbers)"));
        claims.push_back(std::move(c));
        if (p.of.empty()) splits.push_back({claims.size() - 1, &a, p});  // terms and sums are claimed whole
        if (step_leaf(p.step) == "pattern" && p.of.empty() && (p.at.empty() || p.at.contains("head")) && sums_to_one(a)) {
            OrderedJson sum = {{"id", claim_id("rows-sum-to-1", ids)}, {"step", p.step}};
            if (!p.at.empty()) sum["at"] = OrderedJson::parse(p.at.dump());
            sum["of"] = "row_sum";
            sum["decimals"] = decimals_of(a);
            sum["values"] = OrderedJson(std::vector<double>(a.rows.size(), 1.0));
            sum["expect"] = "agrees";
            sum["quote"] = a.quote;
            sum["note"] = "printed as attention weights, each row summing to 1 (drafted from " + a.place.describe() + ")";
            claims.push_back(std::move(sum));
        }
    }
    for (const auto& rc : ex.row_claims) {
        const Placement& p = rc.placement;
        used[ex.candidates[rc.candidate]] = true;
        const bool mask_row = ex.start.kind == StartKind::mask;
        OrderedJson c = {{"id", claim_id(mask_row ? "row-" + rc.row.name
                                                  : rc.row.name.empty() ? step_leaf(p.step) : bare(without_markup(rc.row.name)), ids)}, {"step", p.step}};
        if (!p.at.empty()) c["at"] = OrderedJson::parse(p.at.dump());
        c["decimals"] = decimals_of(rc.row);
        c["values"] = values_json(rc.row);
        c["expect"] = "agrees";
        c["quote"] = rc.row.quote;
        c["note"] = mask_row ? fmt::format("the row of {} in the mask drawn at {} ({})", rc.row.name, rc.row.place.describe(), rc.row.legend)
                             : "a row of the table drafted from " + rc.row.place.describe();
        d.reasons.push_back(fmt::format("claim {}: {} at {} on {}{}: {} of {} printed numbers agree", c["id"].get<std::string>(),
                                        mask_row ? "the row of " + rc.row.name + " in the mask" : std::string("a row of the table"),
                                        rc.row.place.describe(), p.step, p.at.empty() ? "" : " " + p.at.dump(), p.agree, p.total));
        claims.push_back(std::move(c));
    }
    std::unique_ptr<Evaluation> e = run_lesson(d.lesson);
    // Printed weights given as the start: a claim that each row sums to 1, at the decimals where the printed rows do.
    if (ex.start.kind == StartKind::weights) {
        const PrintedArray& a = art.arrays[ex.start.inputs[0]];
        int dec = decimals_of(a);
        for (; dec > 0; --dec) {
            bool all = true;
            for (const auto& r : a.rows) {
                double sum = 0;
                for (const auto& n : r) sum += n.value;
                all = all && std::fabs(sum - 1) < 0.5 * std::pow(10.0, -dec) - 1e-12;
            }
            if (all) break;
        }
        if (dec > 0)
            claims.push_back({{"id", claim_id("rows-sum-to-1", ids)}, {"step", "blocks.0.attn.hook_pattern"}, {"of", "row_sum"},
                              {"decimals", dec}, {"values", OrderedJson(std::vector<double>(a.rows.size(), 1.0))}, {"expect", "agrees"},
                              {"quote", a.quote}, {"note", "attention weights: each row a distribution (drafted from " + a.place.describe() + ")"}});
    }
    const std::size_t from_line = art.arrays[ex.start.first()].place.line;
    // Sentences that say how a token attends ("ring" attends 51% to "fell", 31% to itself): a claim on its row
    // of the weights when they name every key at one precision, else on each cell they name. One head's only:
    // a sentence does not say which head it means.
    const bool mask_only = ex.start.kind == StartKind::mask;  // its run ends at the mask: no weights to claim
    if (!mask_only && d.lesson["config"].value("heads", 1) == 1 && !d.lesson.contains("query_tokens")) {
        const auto tokens = d.lesson["tokens"].get<std::vector<std::string>>();
        for (const ProseRow& r : prose_rows(art, tokens, from_line, text_end, used)) {
            for (std::size_t i : r.arrays) used[i] = true;
            // a sentence of scores ("cat looks at the with score 0.2, at itself with 0.7"): the scores' row its
            // numbers agree with most, the raw ones on a tie; a sentence of shares stays on the weights
            std::string step = "blocks.0.attn.hook_pattern";
            std::string words;
            for (char ch : r.first->quote) words += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if ((words.find("score") != std::string::npos || words.find("logit") != std::string::npos) &&
                words.find('%') == std::string::npos && words.find("weight") == std::string::npos) {
                std::size_t best = 0;
                for (const char* leaf : {"blocks.0.attn.hook_scores_raw", "blocks.0.attn.hook_scores_scaled"}) {
                    const Step* st = e->exact.find(leaf);
                    if (!st || !st->holds_values() || st->shape.size() != 3) continue;  // (head, query, key)
                    std::size_t agree = 0;
                    for (std::size_t k = 0; k < r.keys.size(); ++k)
                        agree += agrees_at_precision(st->held().data[r.query * st->shape[2] + r.keys[k]], static_cast<float>(r.numbers[k].value),
                                                     r.numbers[k].decimals);
                    if (agree > best || step == "blocks.0.attn.hook_pattern") best = agree, step = leaf;
                }
            }
            const std::string base = fmt::format("{}-{}", tokens[r.query], step == "blocks.0.attn.hook_pattern" ? "attends" : "scores");
            const bool whole = r.keys.size() == tokens.size() &&
                               std::all_of(r.numbers.begin(), r.numbers.end(), [&](const PrintedNumber& n) { return n.decimals == r.numbers[0].decimals; });
            const std::string where = r.first->place.describe();
            if (whole) {
                std::vector<double> row(tokens.size());
                for (std::size_t k = 0; k < r.keys.size(); ++k) row[r.keys[k]] = r.numbers[k].value;
                claims.push_back({{"id", claim_id(base, ids)}, {"step", step}, {"at", {{"query", r.query}}},
                                  {"decimals", r.numbers[0].decimals}, {"values", row}, {"expect", "agrees"}, {"quote", r.first->quote},
                                  {"note", (step == "blocks.0.attn.hook_pattern" ? "how " + tokens[r.query] + " attends to each token"
                                                                          : tokens[r.query] + "'s scores against each token") +
                                              ", in words (drafted from " + where + ")"}});
                d.reasons.push_back(fmt::format("claim {}: the sentence at {} gives {}'s row of the weights", claims.back()["id"].get<std::string>(),
                                                where, tokens[r.query]));
                continue;
            }
            for (std::size_t k = 0; k < r.keys.size(); ++k) {
                claims.push_back({{"id", claim_id(base + "-" + tokens[r.keys[k]], ids)}, {"step", step},
                                  {"at", {{"query", r.query}, {"key", r.keys[k]}}}, {"decimals", r.numbers[k].decimals},
                                  {"values", r.numbers[k].value}, {"expect", "agrees"}, {"quote", r.first->quote},
                                  {"note", "how much " + tokens[r.query] + " attends to " + tokens[r.keys[k]] + ", in words (drafted from " + where + ")"}});
                d.reasons.push_back(fmt::format("claim {}: the sentence at {} says how much {} attends to {}", claims.back()["id"].get<std::string>(),
                                                where, tokens[r.query], tokens[r.keys[k]]));
            }
        }
    }
    // A line that works out one query's number against one key ("tea · love = 0.4*1.0 + 1.8*0.2 = 0.76",
    // "q1 · k2 = 4"): its result claimed on the first of the scores, the scaled scores and the weights whose
    // cell gives it; a result no cell gives, on the step every other such line of the example agreed with
    // (one step, at least two lines: the check then says by how much it is wrong).
    if (!mask_only && d.lesson["config"].value("heads", 1) == 1 && !d.lesson.contains("query_tokens")) {
        const auto tokens = d.lesson["tokens"].get<std::vector<std::string>>();
        const std::vector<ProsePair> pairs = prose_pairs(art, tokens, from_line, text_end, used);
        std::vector<const Step*> step_of(pairs.size(), nullptr);
        std::set<const Step*> agreed;
        for (std::size_t p = 0; p < pairs.size(); ++p) {
            const PrintedNumber& n = art.arrays[pairs[p].array].rows[0][0];
            for (const char* leaf : {"attn.hook_scores_raw", "attn.hook_scores_scaled", "attn.hook_pattern"}) {
                const Step* s = e->exact.find(std::string("blocks.0.") + leaf);
                if (!s || !s->holds_values() || s->shape.size() != 3) continue;  // (head, query, key)
                const float x = s->held().data[pairs[p].query * s->shape[2] + pairs[p].key];
                if (!agrees_at_precision(x, static_cast<float>(n.value), n.decimals)) continue;
                step_of[p] = s;
                agreed.insert(s);
                break;
            }
        }
        const std::size_t agreeing = static_cast<std::size_t>(std::count_if(step_of.begin(), step_of.end(), [](const Step* s) { return s; }));
        for (std::size_t p = 0; p < pairs.size(); ++p) {
            const ProsePair& pr = pairs[p];
            const bool wrong = !step_of[p];
            if (wrong && (agreed.size() != 1 || agreeing < 2)) continue;
            const Step* s = wrong ? *agreed.begin() : step_of[p];
            const PrintedArray& a = art.arrays[pr.array];
            const PrintedNumber& n = a.rows[0][0];
            used[pr.array] = true;
            OrderedJson at = OrderedJson::object();
            at["query"] = pr.query;
            at["key"] = pr.key;
            claims.push_back({{"id", claim_id(fmt::format("{}-{}", tokens[pr.query], tokens[pr.key]), ids)}, {"step", s->name},
                              {"at", at}, {"decimals", n.decimals}, {"values", n.value}, {"expect", "agrees"},
                              {"quote", a.quote}, {"note", "the number this line works out for " + tokens[pr.query] + " and " +
                                                               tokens[pr.key] + " (drafted from " + a.place.describe() + ")"}});
            d.reasons.push_back(wrong ? fmt::format("claim {}: the line at {} names {} and {}; no step's cell gives its result: claimed on {}, "
                                                    "where the example's {} other such lines agree",
                                                    claims.back()["id"].get<std::string>(), a.place.describe(), tokens[pr.query],
                                                    tokens[pr.key], s->name, agreeing)
                                      : fmt::format("claim {}: the line at {} names {} and {}; its result is their cell of {}",
                                                    claims.back()["id"].get<std::string>(), a.place.describe(), tokens[pr.query],
                                                    tokens[pr.key], s->name));
        }
    }
    // Prose numbers of two decimals or more, in this example's text, that a cell gives exactly as printed.
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const PrintedArray& a = art.arrays[i];
        if (mask_only || a.form != PrintedForm::prose || a.rows[0][0].decimals < 2 || used[i]) continue;
        if (a.place.line < from_line || a.place.line >= text_end) continue;
        const Placement p = place_array(a, e->exact);
        // a number two steps print is no claim on either (in one step, its first cell of that value is claimed)
        if (p.step.empty() || !p.whole() || p.whole_steps != 1) continue;
        used[i] = true;
        claims.push_back({{"id", claim_id(step_leaf(p.step) + "-line-" + std::to_string(a.place.line), ids)}, {"step", p.step},
                          {"at", OrderedJson::parse(p.at.dump())}, {"decimals", a.rows[0][0].decimals}, {"values", a.rows[0][0].value},
                          {"expect", "agrees"}, {"quote", a.quote}, {"note", "drafted from " + a.place.describe()}});
    }
    if (claims.empty()) return d;
    d.lesson["claims"] = claims;
    // A wrong array claimed again a row (a number) at a time, so that the check says which are right.
    set_verdicts(d);
    for (const Split& sp : splits)
        if (d.lesson["claims"][sp.claim]["expect"] == "disagrees") split_claim(*sp.array, sp.placement, ids, d.lesson["claims"]);
    return d;
}

// Each claim's expected verdict: the one the check gives.
void set_verdicts(Draft& d) {
    if (!d.lesson.contains("claims")) return;
    try {
        const auto e = run_lesson(d.lesson);
        for (std::size_t k = 0; k < e->report.results.size() && k < d.lesson["claims"].size(); ++k)
            d.lesson["claims"][k]["expect"] = std::string(verdict_name(e->report.results[k].verdict));
        d.complete = true;
    } catch (const InputError& err) {
        d.reasons.push_back(std::string("the drafted lesson does not check: ") + err.what());
    }
}

}  // namespace

std::vector<Draft> draft_lessons(const Article& art) {
    const std::vector<Start> starts = find_starts(art);
    const std::size_t n = art.arrays.size();
    std::vector<bool> used(n, false), starts_with_v(n, false);
    for (const Start& s : starts)
        if (s.has_v()) starts_with_v[s.inputs[0]] = true;
    // Each start searched on its own first; then taken best first (the most printed numbers its run explains,
    // the earlier on a tie), each searched again without what the ones taken before it explain.
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (numbers explained, start)
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const Example alone = search(art, starts[k], used, starts_with_v);
        order.push_back({alone.best.score.ran ? alone.best.score.agree + alone.explained : 0, k});
    }
    // a mask printed alone after every other start: a mask in another example's numbers is that example's
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        const bool ma = starts[a.second].kind == StartKind::mask, mb = starts[b.second].kind == StartKind::mask;
        return ma != mb ? mb : a.first > b.first;
    });
    std::vector<Example> accepted;
    // an accepted example takes its inputs, its tokens and the arrays it claims from the examples after it
    std::vector<bool> weights_read(n, false);  // the weights an accepted run from X read
    auto take = [&](Example& ex) {
        for (std::size_t i : ex.start.inputs)
            if (i != kNoArray) used[i] = true;
        if (ex.start.kind == StartKind::embed && !ex.start.identity)
            for (std::size_t r = 1; r < ex.start.inputs.size(); ++r)
                if (ex.start.inputs[r] != kNoArray) weights_read[ex.start.inputs[r]] = true;
        if (ex.start.token_list != kNoArray) used[ex.start.token_list] = true;
        for (std::size_t k = 0; k < ex.candidates.size(); ++k)
            if (!ex.claims[k].step.empty()) used[ex.candidates[k]] = true;
        for (const auto& rc : ex.row_claims) used[ex.candidates[rc.candidate]] = true;
        accepted.push_back(std::move(ex));
    };
    std::string refusal;  // the first start's refusal when no convention of it ran
    for (const auto& [explained, k] : order) {
        Start s = starts[k];
        // a mask the code builds at a size it does not state: no example of its own beside the runs that use it
        if (s.kind == StartKind::mask && art.arrays[s.first()].size_guessed && !accepted.empty()) continue;
        // a V another example took is that example's: this one runs without it
        if (s.has_v() && used[s.inputs.back()]) s.without_v();
        // an input another example read or claimed is that example's; but X: the embeddings may be read by one
        // example on X alone and another with the weights; and weights another run from X read: a tutorial runs
        // a second sentence through the same weights
        const auto own = s.inputs.begin() + (s.kind == StartKind::embed ? 1 : 0);
        if (std::any_of(own, s.inputs.end(),
                        [&](std::size_t i) { return i != kNoArray && used[i] && !(s.kind == StartKind::embed && weights_read[i]); }))
            continue;
        Example ex = search(art, s, used, starts_with_v);
        if (!ex.best.score.ran) {
            if (refusal.empty()) refusal = ex.first_error;
            continue;
        }
        // an example is one when its run explains a printed array (or, from printed weights, states their sums)
        if (ex.explained == 0 && s.kind != StartKind::weights) continue;
        // X alone (no weights) is a guess that small printed numbers fit by chance: it is an example when its
        // run reproduces a printed table whole
        if (s.kind == StartKind::embed && s.identity && !reproduces_a_table(art, ex)) continue;
        take(ex);
        // One start, more than one example: a tutorial runs its X and weights without a mask and then with
        // one. What the first run left is searched again from the same inputs (before the starts after it, as
        // the first run was), each further run kept when it reproduces a printed table at its printed precision.
        for (std::size_t again = 1; again < kMaxRunsPerStart && s.kind != StartKind::mask; ++again) {
            Example more = search(art, s, used, starts_with_v);
            if (!more.best.score.ran || !reproduces_a_table(art, more)) break;
            take(more);
        }
    }
    // The shapes it states: a lesson of their own, beside the worked examples (or the article's only one).
    std::optional<Draft> shapes = draft_shapes(art, lesson_id(art.file) + (accepted.empty() ? "" : "-shapes"));
    if (accepted.empty() && shapes) {
        set_verdicts(*shapes);
        return {std::move(*shapes)};
    }
    if (accepted.empty()) {
        // a batch of sequences as the only X ([B, T, D]): not drafted, and said so
        for (const PrintedArray& a : art.arrays)
            if (a.shape.size() == 3 && is_table(a) && names_input(a.name))
                fail_field(art.file, "", "one sequence's X (a batch of sequences is not drafted)",
                           fmt::format("{} at {}, a batch of {} sequences of {} tokens", a.name, a.place.describe(), a.shape[0], a.shape[1]));
        if (!refusal.empty())
            fail_field(art.file, "", "printed X and weights that make a lesson that runs", "a lesson refused with \"" + refusal + "\"");
        fail_field(art.file, "",
                   "an article that works an example: X and W_Q, W_K, W_V, or Q and K, or a score matrix, or attention weights, "
                   "with numbers computed from them, or that states its arrays' shapes",
                   starts.empty() ? "no array any run can start from" : fmt::format("{} possible starts, none explaining a printed array", starts.size()));
    }
    // in the order of the text: by the first array each reads, then by the others (two sets of weights on one X;
    // X alone, which reads no weights, first, as a tutorial works attention before it brings weights in; one
    // start's runs by the first array each claims)
    auto text_order = [](const Example& e) {
        std::vector<std::size_t> v = e.start.inputs;
        for (std::size_t& i : v) i = i == std::numeric_limits<std::size_t>::max() ? 0 : i + 1;
        std::size_t claimed = std::numeric_limits<std::size_t>::max();
        for (std::size_t k = 0; k < e.candidates.size(); ++k)
            if (!e.claims[k].step.empty()) claimed = std::min(claimed, e.candidates[k]);
        for (const auto& rc : e.row_claims) claimed = std::min(claimed, e.candidates[rc.candidate]);
        return std::make_tuple(e.start.first(), v, claimed);
    };
    std::stable_sort(accepted.begin(), accepted.end(), [&](const Example& a, const Example& b) { return text_order(a) < text_order(b); });
    // the claims again, in the order of the text, each marking what it takes
    std::fill(used.begin(), used.end(), false);
    std::vector<Draft> out;
    const std::string base = accepted[0].best.lesson["id"].get<std::string>();
    for (std::size_t x = 0; x < accepted.size(); ++x) {
        // this example's text ends where the next one's own inputs begin (an X both read is no end)
        std::size_t text_end = std::numeric_limits<std::size_t>::max();
        if (x + 1 < accepted.size())
            for (std::size_t i : accepted[x + 1].start.inputs)
                if (i < art.arrays.size() && std::find(accepted[x].start.inputs.begin(), accepted[x].start.inputs.end(), i) == accepted[x].start.inputs.end())
                    text_end = std::min(text_end, art.arrays[i].place.line);
        out.push_back(write_example(art, accepted[x], accepted.size() == 1 ? base : fmt::format("{}-{}", base, x + 1), text_end, used));
    }
    // What no example explains: listed in the lesson of the example before it, with the nearest selection there.
    std::vector<std::unique_ptr<Evaluation>> runs(out.size());
    for (std::size_t i = 0; i < n; ++i) {
        const PrintedArray& a = art.arrays[i];
        // (an array the code generates is not printed: nothing to place; nor is a mask it builds at a size it does not state)
        if (used[i] || !is_table(a) || a.generated || a.size_guessed) continue;
        std::size_t x = 0;
        while (x + 1 < accepted.size() && accepted[x + 1].start.first() <= i) ++x;
        Draft& d = out[x];
        Placement p;
        try {
            if (!runs[x]) runs[x] = run_lesson(d.lesson);
            p = place_array(a, runs[x]->exact);
        } catch (const InputError&) {
        }
        DraftUnplaced u{a.place.describe(), a.quote, p.step.empty() ? "" : p.step + (p.at.empty() ? "" : " " + p.at.dump()),
                        p.agree, p.total, p.max_error};
        if (!d.lesson.contains("unplaced")) d.lesson["unplaced"] = OrderedJson::array();
        d.lesson["unplaced"].push_back({{"where", u.where}, {"quote", u.quote}, {"nearest", u.nearest},
                                        {"agree", fmt::format("{} of {}", u.agree, u.total)}, {"max_error", u.max_error}});
        d.unplaced.push_back(std::move(u));
    }
    if (shapes) out.push_back(std::move(*shapes));
    for (Draft& d : out) set_verdicts(d);
    return out;
}

Draft draft_lesson(const Article& art) { return draft_lessons(art).front(); }

}  // namespace attntrace
