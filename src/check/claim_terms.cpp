#include "check/claim_terms.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "batch/batch.hpp"
#include "core/error.hpp"
#include "pipeline/cell.hpp"

namespace attntrace {

namespace {

// The claim's `at` as one index per axis of the step, in the step's order (the reader fixed every axis).
std::vector<std::size_t> cell_of(const Claim& claim, const Step& step) {
    std::vector<std::size_t> at;
    for (const std::string& axis : step.axes) {
        auto it = std::find_if(claim.at.begin(), claim.at.end(), [&](const auto& p) { return axis_name(p.first) == axis; });
        at.push_back(it != claim.at.end() ? it->second : 0);
    }
    return at;
}

CellTerms terms_within(const Lesson& lesson, const Trace& trace, const Step& step, const std::vector<std::size_t>& at) {
    if (step.source == StepSource::not_computable) return {{}, step.note};
    if (!step.def) return {{}, fmt::format("{} is not a step of the catalogue", step.name)};
    if (step.source == StepSource::given && !step.formula)  // given before run.from, or its inputs not computable
        return {{}, fmt::format("the lesson gives {} and its formula could not be computed: it has no terms", step.name)};
    const ExplainOptions opt;
    Cell c{lesson, trace, opt, step, at, {}, {}};
    try {
        recompute(c);  // a given step's terms are its formula's, from the recorded inputs
    } catch (const InputError& e) {  // an input the trace policy did not keep: nothing to recompute from
        return {{}, e.what()};
    }
    if (!c.terms) return {{}, fmt::format("the explanation of {} writes no terms", step.name)};
    Tensor t({c.terms->values.size() + 1});
    std::copy(c.terms->values.begin(), c.terms->values.end(), t.data.begin());
    t.data.back() = c.terms->sum;
    return {std::move(t), ""};
}

}  // namespace

namespace {

CellTerms cell_terms(const Lesson& lesson, const Trace& trace, const Step& step, const std::vector<std::size_t>& at,
                     const std::string& name) {
    if (const auto seq = sequence_cell(lesson, trace, step, at)) {
        const Step* inner = seq->trace.find(name);
        return inner ? terms_within(seq->lesson, seq->trace, *inner, seq->at)
                     : CellTerms{{}, "the step is not recorded (see the trace policy)"};
    }
    return terms_within(lesson, trace, step, at);
}

}  // namespace

CellTerms claimed_terms(const Lesson& lesson, const Trace& trace, const Claim& claim) {
    const Step* step = trace.find(claim.step);
    if (!step) return {{}, "the step is not recorded (see the trace policy)"};
    std::vector<std::size_t> at = cell_of(claim, *step);
    if (claim.values.rank() != 2) return cell_terms(lesson, trace, *step, at, claim.step);
    // Z's row, its width free (the reader allows it on hook_z only): column c's terms are A[i, j]·V[j, c] over
    // the keys j, then their sum; row j of the result is key j's weighted value vector, the last row the sum.
    const std::size_t cols = step->shape.back();
    Tensor out;
    for (std::size_t c = 0; c < cols; ++c) {
        at.back() = c;
        CellTerms t = cell_terms(lesson, trace, *step, at, claim.step);
        if (!t.values.size()) return t;
        if (c == 0) out = Tensor({t.values.size(), cols});
        for (std::size_t j = 0; j < t.values.size(); ++j) out.data[j * cols + c] = t.values.data[j];
    }
    // the weighted value vectors without their sum, when the claim prints one row per key
    if (claim.values.shape[0] + 1 == out.shape[0]) {
        Tensor vectors({out.shape[0] - 1, cols});
        std::copy(out.data.begin(), out.data.begin() + static_cast<std::ptrdiff_t>(vectors.size()), vectors.data.begin());
        return {std::move(vectors), "", false};
    }
    return {std::move(out), ""};
}

}  // namespace attntrace
