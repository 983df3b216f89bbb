// Checking claims: what the article prints against what the formulas give, at
// the article's printed precision.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// A printed number agrees with a computed one when the computed one rounds to
// it: see agrees_at_precision() in core/decimal.hpp.

// What a claim was checked against.
enum class Basis {
    formula,  // the formula's value from the steps before: a real check
    given,    // the lesson's given values (no formula could be computed): the
              // article's consistency with itself, e.g. its Q_1 against its Q
    config,   // a shape claim: the extents the config implies
    none,     // not checkable
};
std::string_view basis_text(Basis b);

// Owns a copy of its claim (a few printed numbers and words), so a report
// may be copied, moved or kept after the lesson it was checked from.
struct ClaimResult {
    Claim claim;
    Basis basis = Basis::none;
    Verdict verdict = Verdict::not_checkable;
    Tensor computed;   // the selected values, exact arithmetic (empty if not checkable)
    Tensor document;   // the same from the document-arithmetic run (empty if none)
    double max_deviation = 0.0;  // largest |computed - printed|, exact arithmetic
    std::size_t cells_off = 0;   // how many printed numbers disagree (exact)
    std::string reason;          // not checkable: why; shape claims: the shapes
    std::string rests_on;        // agrees_from_given: the given step upstream that its formula does not give
    Tensor formula_only;         // agrees_from_given: the values without the article's wrong given values (empty: none)
    // A next_token claim whose token is not the top one: the top one (a vocabulary id). It disagrees for
    // that, whatever its probability (cells_off says whether the probability is off too).
    std::optional<std::size_t> top_token;
    bool as_expected() const { return verdict == claim.expect; }
};

struct CheckReport {
    std::vector<ClaimResult> results;
    bool all_as_expected() const;
    std::size_t count(Verdict v) const;
};

// A given step the article got wrong: its formula could be computed, and the
// given values do not round from it at the decimals they are written with.
bool given_wrongly(const Step& s);

// `document` is the trace of the document-arithmetic run, or null when the
// lesson rounds nothing.
CheckReport check_claims(const Lesson& lesson, const Trace& exact, const Trace* document);

// The cells a claim selects from a step's tensor (kind values), or their
// reduction (kind reduced: row sums, column maxima, ...), in the claim's shape
// (check/claim_region.hpp). A reduction of finite values beyond float32's
// range (3e38 + 3e38) sets `overflow` to its index in the result (its value
// is then +-inf); check_claims refuses the lesson for it.
Tensor select_claimed(const Claim& claim, const Step& step, const Tensor& values,
                      std::optional<std::size_t>* overflow = nullptr);

// A vocabulary entry of the logits (step unembed) as its piece ("␣fell"), or
// its id when the step has no such labels.
std::string vocab_label(const Step& step, std::size_t v);

// "row 'ring' (query 1), head h0": the claim's `at` in words.
std::string describe_at(const Claim& claim, const Step& step);

}  // namespace attntrace
