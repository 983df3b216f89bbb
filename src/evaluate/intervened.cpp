#include "evaluate/intervened.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace attntrace {

std::unique_ptr<IntervenedEvaluation> evaluate_intervened(Lesson lesson, TracePolicy policy,
                                                          const std::vector<InterventionArg>& args,
                                                          const ProgressFn& progress) {
    if (lesson.batch)
        fail_file(lesson.file, fmt::format("{}: expected a lesson of one sequence (a batch's sequences are run apart: "
                                           "intervene on one of them), found a batch",
                                           args.front().flag()));
    for (const std::string& step : intervention_steps(lesson, args))
        if (std::find(policy.keep.begin(), policy.keep.end(), step) == policy.keep.end()) policy.keep.push_back(step);
    auto e = std::make_unique<IntervenedEvaluation>();
    Lesson changed = lesson;  // a checkpoint's weights are shared (weight_source), a lesson's copied
    // The article's claims are about the run as it was: checked on the original, not on the changed run.
    changed.claims.clear();
    e->original = evaluate(std::move(lesson), policy, progress);
    e->interventions = apply_interventions(changed, e->original->exact, args);
    e->changed = evaluate(std::move(changed), policy, progress);
    e->comparison = compare_traces(e->original->exact, e->changed->exact);
    return e;
}

CommandEvaluation evaluate_command(Lesson lesson, const TracePolicy& policy, const std::vector<InterventionArg>& args,
                                   const ProgressFn& progress) {
    CommandEvaluation c;
    if (args.empty()) c.plain = evaluate(std::move(lesson), policy, progress);
    else c.intervened = evaluate_intervened(std::move(lesson), policy, args, progress);
    return c;
}

std::vector<ChangedStep> changed_steps(const IntervenedEvaluation& e) {
    std::vector<ChangedStep> out;
    for (const StepChange& s : e.comparison.steps) {
        if (s.change != Change::changed) continue;
        ChangedStep c{s.name, s.diff.cells, s.diff.beyond, s.diff.max_abs ? s.diff.max_abs->abs : 0.0};
        out.push_back(std::move(c));
    }
    return out;
}

OrderedJson interventions_json(const IntervenedEvaluation& e, std::size_t top_k) {
    OrderedJson j;
    OrderedJson changes = OrderedJson::array();
    for (const Intervention& i : e.interventions)
        changes.push_back({{"flag", i.typed}, {"step", i.step}, {"cells", i.cells}, {"count", i.count}, {"value", i.value}});
    j["changes"] = std::move(changes);
    OrderedJson steps = OrderedJson::array();
    for (const ChangedStep& c : changed_steps(e))
        steps.push_back({{"name", c.name}, {"cells", c.cells}, {"changed", c.changed},
                         {"max_abs_change", std::isfinite(c.max_abs) ? OrderedJson(c.max_abs) : OrderedJson(nullptr)}});
    j["changed_steps"] = std::move(steps);
    j["unchanged_steps"] = e.comparison.count(Change::unchanged);
    j["not_compared_steps"] = e.comparison.count(Change::not_computable);  // kept as summaries or not at all
    const Lesson& lesson = e.changed->lesson;
    if (lesson.config.arch.unembed) {
        j["next_tokens_before"] = model_end_json(e.original->lesson, model_end(e.original->lesson, e.original->exact, top_k));
        j["next_tokens_after"] = model_end_json(lesson, model_end(lesson, e.changed->exact, top_k));
    }
    return j;
}

}  // namespace attntrace
