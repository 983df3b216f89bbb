#include "evaluate/evaluate.hpp"

#include <omp.h>

#include "batch/batch.hpp"
#include "core/memory.hpp"
#include "pipeline/run.hpp"

namespace attntrace {

std::unique_ptr<Evaluation> evaluate(Lesson lesson, const TracePolicy& policy, const ProgressFn& progress) {
    auto e = std::make_unique<Evaluation>();
    e->lesson = std::move(lesson);
    if (e->lesson.batch) {  // B one-sequence runs, stacked (src/batch/)
        e->exact = run_batch(e->lesson, Arithmetic::exact, policy, progress);
        if (!e->lesson.document_rounding.empty())
            e->document = run_batch(e->lesson, Arithmetic::document, policy, progress);
        e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
        return e;
    }
    const int threads = omp_get_max_threads();
    const std::size_t budget = max_memory_bytes();
    const Plan exact = make_plan(e->lesson, policy, Arithmetic::exact, threads);
    require_memory(exact, e->lesson, Arithmetic::exact, threads, budget);
    std::optional<Plan> document;
    if (!e->lesson.document_rounding.empty()) {
        // The exact trace is held while the document run goes.
        document = make_plan(e->lesson, policy, Arithmetic::document, threads);
        document->peak_bytes += exact.kept_bytes;
        require_memory(*document, e->lesson, Arithmetic::document, threads, budget);
    }
    e->exact = run_planned(e->lesson, Arithmetic::exact, exact, progress);
    if (document) e->document = run_planned(e->lesson, Arithmetic::document, *document, progress);
    e->report = check_claims(e->lesson, e->exact, e->document ? &*e->document : nullptr);
    return e;
}

}  // namespace attntrace
