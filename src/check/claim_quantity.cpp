#include "check/claim_quantity.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "batch/batch.hpp"
#include "core/error.hpp"
#include "pipeline/cell.hpp"

namespace attntrace {

namespace {

// The quantity named `name` of the cell at `at` (one index per axis) of `step`, or the reason there is none.
std::optional<double> cell_quantity(const Lesson& lesson, const Trace& trace, const Step& step,
                                    const std::vector<std::size_t>& at, const std::string& name, std::string& reason) {
    if (const auto seq = sequence_cell(lesson, trace, step, at)) {
        const Step* inner = seq->trace.find(step.name);
        if (!inner) {
            reason = "the step is not recorded (see the trace policy)";
            return std::nullopt;
        }
        return cell_quantity(seq->lesson, seq->trace, *inner, seq->at, name, reason);
    }
    const ExplainOptions opt;
    Cell c{lesson, trace, opt, step, at, {}, {}};
    try {
        recompute(c);
    } catch (const InputError& e) {  // an input the trace policy did not keep: nothing to recompute from
        reason = e.what();
        return std::nullopt;
    }
    for (const auto& [n, v] : c.quantities)
        if (n == name) return v;
    std::string where;
    for (std::size_t k = 0; k < at.size(); ++k) where += fmt::format("{}{}", k ? "," : "", at[k]);
    reason = fmt::format("the formula of {}[{}] has no {} (its explanation works none out)", step.name, where, name);
    return std::nullopt;
}

}  // namespace

ClaimedQuantity claimed_quantity(const Lesson& lesson, const Trace& trace, const Claim& claim) {
    const Step* step = trace.find(claim.step);
    if (!step) return {{}, "the step is not recorded (see the trace policy)"};
    if (step->source == StepSource::not_computable) return {{}, step->note};
    Shape region;
    const std::vector<std::size_t> offsets = selected_offsets(claim.at, claim.select, step->shape, step->axes, &region);
    Tensor out(region);
    std::vector<std::size_t> at(step->shape.size());
    std::string reason;
    for (std::size_t n = 0; n < offsets.size(); ++n) {
        std::size_t rest = offsets[n];
        for (std::size_t k = at.size(); k-- > 0;) {
            at[k] = rest % step->shape[k];
            rest /= step->shape[k];
        }
        const std::optional<double> q = cell_quantity(lesson, trace, *step, at, claim.quantity, reason);
        if (!q) return {{}, reason};
        out.data[n] = static_cast<float>(*q);
    }
    return {std::move(out), ""};
}

}  // namespace attntrace
