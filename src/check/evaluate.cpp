#include "check/evaluate.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

namespace {

// Never a silent NaN: finite inputs can still overflow float32 inside the
// block (X entries of 1e30 square past 3.4e38 in the scores). Such a run is
// refused, naming the step and cell. -inf is a blocked cell only where the
// step may hold one: computed values only from the mask, given values also
// in the scores an article states.
void check_tensor(const Step& s, const Tensor& t, bool given, const std::string& file, const char* what) {
    const bool neg_inf_ok = s.def && (s.def->neg_inf == NegInf::masked || (given && s.def->neg_inf == NegInf::given));
    for (std::size_t i = 0; i < t.size(); ++i) {
        const float x = t.data[i];
        if (std::isnan(x) || (std::isinf(x) && (x > 0 || !neg_inf_ok)))
            fail_file(file, fmt::format("{}: expected finite {}, found {} at flat index {} (float32 overflow or an "
                                        "undefined operation upstream)",
                                        s.name, what, std::isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf", i));
    }
}

void check_finite(const Trace& trace, const std::string& file) {
    for (const Step& s : trace.steps) {
        if (s.source == StepSource::not_computable) continue;
        check_tensor(s, s.value, s.source == StepSource::given, file, "values");
        if (s.formula) check_tensor(s, *s.formula, false, file, "formula values");
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
