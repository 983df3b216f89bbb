#include "check/evaluate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// Never a silent NaN: finite inputs can still overflow float32 inside the
// block (X entries of 1e30 square past 3.4e38 in the scores). Such a run is
// refused, naming the first step and cell that lost its meaning.
void check_finite(const Trace& trace, const std::string& file) {
    for (const Step& s : trace.steps) {
        if (s.source == StepSource::not_computable) continue;
        const bool neg_inf_ok = may_hold_neg_inf(s.name);
        for (std::size_t i = 0; i < s.value.size(); ++i) {
            float x = s.value.data[i];
            if (std::isnan(x) || (std::isinf(x) && (x > 0 || !neg_inf_ok)))
                fail_file(file, fmt::format("{}: expected finite values, found {} at flat index {}: the inputs are too "
                                            "large for float32 arithmetic",
                                            s.name, std::isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf", i));
        }
    }
}

}  // namespace

std::unique_ptr<Evaluation> evaluate(Lesson lesson) {
    auto e = std::make_unique<Evaluation>();
    e->lesson = std::move(lesson);
    e->exact = run_lesson(e->lesson, Arithmetic::exact);
    if (!e->lesson.document_rounding.empty()) e->document = run_lesson(e->lesson, Arithmetic::document);
    check_finite(e->exact, e->lesson.file);
    if (e->document) check_finite(*e->document, e->lesson.file);
    e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
    return e;
}

}  // namespace attntrace
