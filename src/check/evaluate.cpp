#include "check/evaluate.hpp"

#include "pipeline/run.hpp"

namespace attntrace {

std::unique_ptr<Evaluation> evaluate(Lesson lesson) {
    auto e = std::make_unique<Evaluation>();
    e->lesson = std::move(lesson);
    e->exact = run_lesson(e->lesson, Arithmetic::exact);
    if (!e->lesson.document_rounding.empty()) e->document = run_lesson(e->lesson, Arithmetic::document);
    e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
    return e;
}

}  // namespace attntrace
