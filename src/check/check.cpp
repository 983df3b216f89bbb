#include "check/check.hpp"

#include "check/claim_region.hpp"
#include "check/claim_quantity.hpp"
#include "check/claim_terms.hpp"
#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "kernels/next_token.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace attntrace {

namespace {

bool all_agree(const Tensor& computed, const Claim& c) {
    for (std::size_t i = 0; i < c.values.size(); ++i)
        if (!agrees_as_printed(computed.data[i], c.values.data[i], c.precision_at(i))) return false;
    return true;
}

void deviations(ClaimResult& r) {
    const Claim& c = r.claim;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
        float x = r.computed.data[i], p = c.values.data[i];
        double dev = (std::isinf(x) || std::isinf(p)) ? (x == p ? 0.0 : INFINITY)
                                                       : std::fabs(static_cast<double>(x) - p);
        if (!agrees_as_printed(x, p, c.precision_at(i))) ++r.cells_off;
        if (dev > r.max_deviation) r.max_deviation = dev;
    }
}

ClaimResult check_shape(const Claim& c, const Step& step) {
    ClaimResult r;
    r.claim = c;
    std::string ours, theirs;
    bool ok = true;
    for (const auto& [axis, extent] : c.shape) {
        std::size_t k = std::find(step.axes.begin(), step.axes.end(), axis_name(axis)) - step.axes.begin();
        std::size_t have = step.shape[k];
        if (have == 0) {  // d_ff not in the lesson: the extent is unknown
            r.basis = Basis::none;
            r.reason = fmt::format("the lesson does not give the {} extent (config)", axis_name(axis));
            return r;
        }
        ok = ok && have == extent;
        theirs += fmt::format("{}{}={}", theirs.empty() ? "" : ", ", axis_name(axis), extent);
        ours += fmt::format("{}{}={}", ours.empty() ? "" : ", ", axis_name(axis), have);
    }
    r.verdict = ok ? Verdict::agrees : Verdict::disagrees;
    r.basis = Basis::config;
    r.reason = ok ? fmt::format("shape {}", ours) : fmt::format("article: {}; computed: {}", theirs, ours);
    return r;
}

}  // namespace

bool given_wrongly(const Step& s) {
    if (s.source != StepSource::given || !s.formula || s.recorded != Record::full) return false;
    const std::vector<bool> wrong = wrongly_given_cells(s.held(), s.given_cells, *s.formula);  // a given step holds its values
    return std::find(wrong.begin(), wrong.end(), true) != wrong.end();
}

namespace {

// The first given step the article got wrong among the steps `step` was
// computed from, transitively (by the inputs each step names), or "".
std::string wrong_given_upstream(const Trace& trace, const Step& step) {
    std::vector<const Step*> todo = {&step};
    std::set<std::string> seen = {step.name};
    while (!todo.empty()) {
        const Step* s = todo.back();
        todo.pop_back();
        for (const std::string& in : s->inputs) {
            const Step* up = trace.find(in);
            if (!up || !seen.insert(in).second) continue;
            if (given_wrongly(*up)) return up->name;
            todo.push_back(up);
        }
    }
    return "";
}

// The verdict of r.computed (and of `rounded`, the document run's values, or
// none) against the claim's printed values, r.basis set.
void judge(ClaimResult& r, const Trace& exact, const Step& step, Tensor rounded) {
    const Claim& c = r.claim;
    deviations(r);
    r.verdict = all_agree(r.computed, c) ? Verdict::agrees : Verdict::disagrees;
    // Agreeing with numbers computed from a value the article got wrong checks the article
    // against itself, not against attention: its own verdict, naming the value.
    if (r.verdict == Verdict::agrees && r.basis == Basis::formula) {
        r.rests_on = wrong_given_upstream(exact, step);
        if (!r.rests_on.empty()) r.verdict = Verdict::agrees_from_given;
    }
    r.document = std::move(rounded);
    if (r.document.size() == c.values.size() && r.verdict == Verdict::disagrees && all_agree(r.document, c))
        r.verdict = Verdict::agrees_when_rounded;
}

// A cell's terms (n + 1: the sum last; or a row per key and the sum row last) as an article that adds
// them as it prints them gets them: each term rounded to its printed precision, the sum theirs (in
// double, as the exact sum is). 0.124 + 0.124 printed 0.12 + 0.12 = 0.24 where the exact sum is 0.25.
Tensor summed_as_printed(const Tensor& terms, const Claim& c) {
    Tensor t = terms;
    const std::size_t cols = t.rank() == 2 ? t.shape[1] : 1, rows = t.size() / cols;
    for (std::size_t col = 0; col < cols; ++col) {
        double sum = 0;
        for (std::size_t j = 0; j + 1 < rows; ++j) {
            float& x = t.data[j * cols + col];
            const Precision p = c.precision_at(j * cols + col);
            x = p.unit == Precision::Unit::decimals ? round_decimals(x, p.digits) : round_significant(x, p.digits);
            sum += x;
        }
        t.data[(rows - 1) * cols + col] = static_cast<float>(sum);
    }
    return t;
}

// A claim on one cell's terms (check/claim_terms.hpp): the terms recomputed
// from the exact run's trace and from the document run's, judged as values.
// A count the cell does not have is the lesson's error: refused, one line.
ClaimResult check_terms(const Lesson& lesson, const Trace& exact, const Trace* document, std::size_t ci,
                        const Step& step) {
    const Claim& c = lesson.claims[ci];
    ClaimResult r;
    r.claim = c;
    CellTerms terms = claimed_terms(lesson, exact, c);
    if (!terms.values.size()) {
        r.reason = terms.reason;
        return r;
    }
    if (c.values.rank() == 2) {  // weighted value vectors (claim_terms.hpp): a row per key, then maybe their sum
        const std::size_t keys = terms.values.shape[0] - 1;  // on a mismatch the terms come with their sum
        if (c.values.shape != terms.values.shape)
            fail_field(lesson.file, join(index("claims", ci), "values"),
                       fmt::format("{} rows of {} (the weighted value vectors of {} keys), or {} with their sum last", keys,
                                   terms.values.shape[1], keys, keys + 1),
                       array_text(c.values.shape));
    }
    const std::size_t n = terms.values.size() - 1;
    if (c.values.rank() == 1 && c.values.size() != terms.values.size())
        fail_field(lesson.file, join(index("claims", ci), "values"),
                   fmt::format("{} numbers: the {} terms of this cell of {}, then their sum", n + 1, n, c.step),
                   fmt::format("{} numbers", c.values.size()));
    r.basis = Basis::formula;  // a given step's terms are its formula's
    r.computed = std::move(terms.values);
    Tensor rounded = document ? claimed_terms(lesson, *document, c).values : Tensor{};
    judge(r, exact, step, std::move(rounded));
    if (r.verdict == Verdict::disagrees && terms.with_sum) {
        Tensor as_printed = summed_as_printed(r.computed, c);
        if (all_agree(as_printed, c)) {
            r.verdict = Verdict::agrees_when_rounded;
            r.document = std::move(as_printed);
            r.reason = "the article adds its terms as it prints them, rounded";
        }
    }
    return r;
}

// A claim on a quantity inside the step's formula (check/claim_quantity.hpp), per selected cell:
// judged as values. The rounding of the document run does not reach it (a position's angle reads no step).
ClaimResult check_quantity(const Lesson& lesson, const Trace& exact, const Claim& c, const Step& step) {
    ClaimResult r;
    r.claim = c;
    ClaimedQuantity q = claimed_quantity(lesson, exact, c);
    if (!q.values.size()) {
        r.reason = q.reason;
        return r;
    }
    r.basis = Basis::formula;
    r.computed = std::move(q.values);
    judge(r, exact, step, {});
    return r;
}

// A claim `of: "next_token"`: the claimed token's probability judged as a
// value; a token that is not the top one (the largest logit, the lower id on
// a tie) disagrees whatever its probability, the top one named in the reason.
ClaimResult check_next_token(const Claim& c, const Trace& exact, const Trace* document, const Step& step,
                             const StepValues& values) {
    ClaimResult r;
    r.claim = c;
    r.basis = Basis::formula;
    auto probability = [&](const Step& s, const Tensor& v, std::size_t* top) {
        const Tensor row = claimed_region(c, s, v);  // (V): the position's logits
        const std::vector<double> p = next_token_probabilities(row.ptr(), row.size());
        // the largest logit, the first (lowest id) on a tie: next_tokens' ranking
        if (top) *top = static_cast<std::size_t>(std::max_element(row.ptr(), row.ptr() + row.size()) - row.ptr());
        Tensor t(c.values.shape);
        t.data[0] = static_cast<float>(p.at(c.token));
        return std::make_pair(t, p);
    };
    std::size_t top = 0;
    auto [computed, p] = probability(step, *values, &top);
    r.computed = std::move(computed);
    Tensor rounded;
    if (document) {
        const Step* ds = document->find(c.step);
        if (const auto dv = ds ? checked_values(*document, *ds) : std::nullopt) rounded = probability(*ds, **dv, nullptr).first;
    }
    judge(r, exact, step, std::move(rounded));
    if (top != c.token) {
        r.verdict = Verdict::disagrees;
        r.top_token = top;
        r.reason = fmt::format("the top next token is '{}' (#{}, p = {:.4f}), not '{}' (#{}, p = {:.4f})",
                               vocab_label(step, top), top, p[top], vocab_label(step, c.token), c.token, p[c.token]);
    }
    return r;
}

}  // namespace

std::string_view basis_text(Basis b) {
    switch (b) {
        case Basis::formula: return "formula";
        case Basis::given: return "given";
        case Basis::config: return "config";
        case Basis::none: return "none";
    }
    return "none";
}

Tensor select_claimed(const Claim& claim, const Step& step, const Tensor& values, std::optional<std::size_t>* overflow) {
    Tensor region = claimed_region(claim, step, values);
    return claim.kind == Claim::Kind::reduced ? reduce(region, claim.reduction, overflow) : region;
}

std::string vocab_label(const Step& step, std::size_t v) {
    return step.labels.size() > 1 && v < step.labels[1].size() ? step.labels[1][v] : std::to_string(v);
}

std::string describe_at(const Claim& claim, const Step& step) {
    auto label = [&](std::size_t k, std::size_t i) {
        return k < step.labels.size() && i < step.labels[k].size() ? "'" + step.labels[k][i] + "'" : std::to_string(i);
    };
    std::string out;
    // In the step's axis order, whatever order the lesson wrote them in.
    for (std::size_t k = 0; k < step.axes.size(); ++k) {
        for (const auto& [axis, i] : claim.at)
            if (axis_name(axis) == step.axes[k]) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", step.axes[k], label(k, i));
        for (const auto& [axis, indices] : claim.select) {
            if (axis_name(axis) != step.axes[k]) continue;
            std::string list;
            for (std::size_t i : indices) list += (list.empty() ? "" : " ") + label(k, i);
            out += fmt::format("{}{} [{}]", out.empty() ? "" : ", ", step.axes[k], list);
        }
    }
    if (claim.kind == Claim::Kind::reduced) out += (out.empty() ? "" : ", ") + reduction_words(claim.reduction);
    if (!claim.printed_axes.empty()) {  // printed in another order than the step's (Kᵀ); shown in the step's
        std::string order;
        for (Axis a : claim.printed_axes) order += (order.empty() ? "" : " x ") + std::string(axis_name(a));
        out += (out.empty() ? "" : ", ") + fmt::format("printed {}, shown in the step's order", order);
    }
    if (claim.kind == Claim::Kind::terms)
        out += (out.empty() ? "" : ", ") +
               std::string(claim.values.rank() == 2 ? "its weighted value vectors, a row per key" : "its terms and their sum");
    if (claim.kind == Claim::Kind::quantity) out += (out.empty() ? "" : ", ") + fmt::format("its {}", claim.quantity);
    if (claim.kind == Claim::Kind::next_token)
        out += (out.empty() ? "" : ", ") + fmt::format("the next token '{}' and its probability", vocab_label(step, claim.token));
    return out;
}

CheckReport check_claims(const Lesson& lesson, const Trace& exact, const Trace* document) {
    CheckReport report;
    for (std::size_t ci = 0; ci < lesson.claims.size(); ++ci) {
        const Claim& c = lesson.claims[ci];
        // A row sum (any reduction) computed here for the claim overflows as a step would in the run: refused,
        // naming the claim and the step (pipeline/run.cpp refuses a step's own +inf the same way).
        auto claimed = [&](const Step& s, const Tensor& v) {
            std::optional<std::size_t> overflow;
            Tensor t = select_claimed(c, s, v, &overflow);
            if (overflow)
                fail_field(lesson.file, index("claims", ci),
                           fmt::format("{} of {} within float32 (|x| <= 3.4e38)", reduction_words(c.reduction), s.name),
                           fmt::format("{} for {} {} (float32 overflow of finite values)",
                                       t.data[*overflow] > 0 ? "+inf" : "-inf",
                                       c.reduction.over == Reduction::Over::row      ? "row"
                                       : c.reduction.over == Reduction::Over::column ? "column"
                                                                                     : "cell",
                                       *overflow));
            return t;
        };
        const Step* step = exact.find(c.step);
        ClaimResult r;
        r.claim = c;
        if (!step) {
            r.reason = "the step is not recorded (see the trace policy)";
        } else if (step->recorded != Record::full && c.kind != Claim::Kind::shape) {
            r.reason = "the trace policy kept only a summary of this step";
        } else if (c.kind == Claim::Kind::shape) {
            r = check_shape(c, *step);
        } else if (c.kind == Claim::Kind::terms) {
            r = check_terms(lesson, exact, document, ci, *step);
        } else if (c.kind == Claim::Kind::quantity) {
            r = check_quantity(lesson, exact, c, *step);
        } else if (const std::optional<StepValues> v = c.kind == Claim::Kind::next_token ? checked_values(exact, *step)
                                                                                          : std::nullopt) {
            r = check_next_token(c, exact, document, *step, *v);
        } else if (const std::optional<StepValues> v = checked_values(exact, *step)) {
            r.basis = step->formula || step->source == StepSource::computed ? Basis::formula : Basis::given;
            r.computed = claimed(*step, **v);
            Tensor rounded;
            if (document) {
                const Step* ds = document->find(c.step);
                if (const auto dv = ds ? checked_values(*document, *ds) : std::nullopt) rounded = claimed(*ds, **dv);
            }
            judge(r, exact, *step, std::move(rounded));
        } else {
            r.reason = step->note;
        }
        report.results.push_back(std::move(r));
    }
    return report;
}

bool CheckReport::all_as_expected() const {
    return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.as_expected(); });
}

std::size_t CheckReport::count(Verdict v) const {
    return static_cast<std::size_t>(
        std::count_if(results.begin(), results.end(), [&](const auto& r) { return r.verdict == v; }));
}

}  // namespace attntrace
