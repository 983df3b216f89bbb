#include "evaluate/evaluate.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "batch/batch.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "evaluate/printed_inputs.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// A step kept as a summary (--trace summary) shows its row sums, which the
// summary adds in double and keeps as float32: finite values (3e38 + 3e38)
// may sum past float32's range. Refused like a step's own overflow in the
// run (pipeline/run.cpp), naming the step, instead of showing "inf". Blocked
// (-inf) cells are left out of the sums, so a non-finite sum is an overflow.
void require_finite_summaries(const Trace& trace, const std::string& file) {
    for (const Step& s : trace.steps) {
        if (!s.summary) continue;
        const Tensor& sums = s.summary->row_sums;
        for (std::size_t r = 0; r < sums.size(); ++r)
            if (!std::isfinite(sums.data[r]))
                fail_file(file, fmt::format("{}: expected row sums within float32 for its summary, found {} for row {} "
                                            "(float32 overflow of finite values)",
                                            s.name, sums.data[r] > 0 ? "+inf" : "-inf", r));
    }
}

struct Plans {
    Plan exact;
    std::optional<Plan> document;
};

// The runs' plans, each refused (require_memory) when its peak exceeds --max-memory.
Plans plans_within_memory(const Lesson& lesson, const TracePolicy& policy) {
    const int threads = omp_get_max_threads();
    const std::size_t budget = max_memory_bytes();
    Plans p{make_plan(lesson, policy, Arithmetic::exact, threads), std::nullopt};
    require_memory(p.exact, lesson, Arithmetic::exact, threads, budget);
    if (!lesson.document_rounding.empty()) {
        // The exact trace is held while the document run goes.
        p.document = make_plan(lesson, policy, Arithmetic::document, threads);
        p.document->peak_bytes += p.exact.kept_bytes;
        require_memory(*p.document, lesson, Arithmetic::document, threads, budget);
    }
    return p;
}

std::size_t given_count(const Tensor& cells, std::size_t size) {
    return cells.data.empty() ? size : static_cast<std::size_t>(std::count(cells.data.begin(), cells.data.end(), 1.0f));
}

// The lesson run again, exactly, each claim's values as the check takes them.
CheckReport rerun(const Lesson& lesson, const TracePolicy& policy, Trace* kept = nullptr) {
    const Plans p = plans_within_memory(lesson, policy);
    Trace t = run_planned(lesson, Arithmetic::exact, p.exact, {});
    CheckReport r = check_claims(lesson, t, nullptr);
    if (kept) *kept = std::move(t);
    return r;
}

// A claim that agrees with values computed from a given value the article got wrong rests on it only
// where its own cells do. The lesson is run again without the article's mistakes: each given cell
// replaces the formula's only where the formula, computed from that run's own inputs, agrees with it
// (a step given after a wrong one is judged against what the formula gives from the right values). A
// claim whose cells come out the same, number for number, agrees plainly. The others show what the
// formula gives without every given step the article got wrong (in part or whole), as a disagreeing
// claim shows the right values (formula_only).
void settle_from_given(Evaluation& e, const TracePolicy& policy) {
    auto& results = e.report.results;
    if (std::none_of(results.begin(), results.end(), [](const ClaimResult& r) { return r.verdict == Verdict::agrees_from_given; }))
        return;
    Lesson repaired = e.lesson;
    repaired.document_rounding.clear();
    for (auto& [name, g] : repaired.given) g.only_where_formula_agrees = true;
    Trace repaired_trace;
    const CheckReport same_cells = rerun(repaired, policy, &repaired_trace);

    Lesson formula = e.lesson;
    formula.document_rounding.clear();
    for (const auto& [name, g] : e.lesson.given) {
        const Step* s = repaired_trace.find(name);
        if (s && (s->source != StepSource::given ||
                  given_count(s->given_cells, numel(s->shape)) < given_count(g.cells, g.values.size())))
            formula.given.erase(name);
    }
    const CheckReport formula_only = rerun(formula, policy);
    for (std::size_t k = 0; k < results.size() && k < same_cells.results.size(); ++k) {
        ClaimResult& c = results[k];
        if (c.verdict != Verdict::agrees_from_given) continue;
        const Tensor& without = same_cells.results[k].computed;
        if (without.shape == c.computed.shape && without.data == c.computed.data) {
            c.verdict = Verdict::agrees;
            c.rests_on.clear();
        } else if (k < formula_only.results.size()) {
            c.formula_only = formula_only.results[k].computed;
        }
    }
}

}  // namespace

void require_run_fits(const Lesson& lesson, const TracePolicy& policy) {
    if (!lesson.batch) plans_within_memory(lesson, policy);  // a batch plans each sequence's run (src/batch/)
}

std::unique_ptr<Evaluation> evaluate(Lesson lesson, const TracePolicy& policy, const ProgressFn& progress) {
    auto e = std::make_unique<Evaluation>();
    e->lesson = std::move(lesson);
    if (e->lesson.batch) {  // B one-sequence runs, stacked (src/batch/)
        e->exact = run_batch(e->lesson, Arithmetic::exact, policy, progress);
        if (!e->lesson.document_rounding.empty())
            e->document = run_batch(e->lesson, Arithmetic::document, policy, progress);
        require_finite_summaries(e->exact, e->lesson.file);
        if (e->document) require_finite_summaries(*e->document, e->lesson.file);
        e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
        return e;
    }
    const auto [exact, document] = plans_within_memory(e->lesson, policy);
    e->exact = run_planned(e->lesson, Arithmetic::exact, exact, progress);
    if (document) e->document = run_planned(e->lesson, Arithmetic::document, *document, progress);
    require_finite_summaries(e->exact, e->lesson.file);
    if (e->document) require_finite_summaries(*e->document, e->lesson.file);
    e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
    settle_from_given(*e, policy);
    within_printed_inputs(e->lesson, e->report, [&](const Lesson& l) { return rerun(l, policy); });
    return e;
}

}  // namespace attntrace
