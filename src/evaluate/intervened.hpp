// A run with interventions (--set, --ablate; compare/intervention.hpp) and
// the same run without them, compared step by step: what every command that
// takes the flags (run, export, report, explain, decode) evaluates.
#pragma once

#include <memory>
#include <vector>

#include "compare/compare.hpp"
#include "compare/intervention.hpp"
#include "evaluate/evaluate.hpp"
#include "evaluate/model_end.hpp"

namespace attntrace {

struct IntervenedEvaluation {
    std::unique_ptr<Evaluation> original;  // the lesson as it is
    std::unique_ptr<Evaluation> changed;   // with the interventions; its lesson holds them as `given`
    std::vector<Intervention> interventions;
    Comparison comparison;                 // A: original, B: changed (exact arithmetic)
};

// Runs `lesson` as it is, then with `args` applied, both under `policy` with
// the intervened steps kept in full (the original's values are what a mean
// ablation averages and what a selection leaves). Refuses (InputError) a
// batched lesson, and whatever intervention_steps and apply_interventions
// refuse, before the second run.
std::unique_ptr<IntervenedEvaluation> evaluate_intervened(Lesson lesson, TracePolicy policy,
                                                          const std::vector<InterventionArg>& args,
                                                          const ProgressFn& progress = {});

// What a command that takes --set and --ablate evaluates: with interventions,
// the changed run beside the original; without, the run alone (evaluate()).
struct CommandEvaluation {
    std::unique_ptr<IntervenedEvaluation> intervened;  // null without interventions
    std::unique_ptr<Evaluation> plain;                 // null with them
    // The run the command shows: the changed one, or the run itself.
    const Evaluation& shown() const { return intervened ? *intervened->changed : *plain; }
};
CommandEvaluation evaluate_command(Lesson lesson, const TracePolicy& policy, const std::vector<InterventionArg>& args,
                                   const ProgressFn& progress = {});

// The steps after the interventions whose values changed, with the largest
// change of each: what the views list (the comparison's, in pipeline order).
struct ChangedStep {
    std::string name;
    std::size_t cells = 0, changed = 0;
    double max_abs = 0;  // largest |after - before| over finite pairs
};
std::vector<ChangedStep> changed_steps(const IntervenedEvaluation& e);

// The interventions and their effect as JSON (the export's and run --json's
// "interventions" field, docs/interventions.md): each change, the changed
// steps, and with a head the next tokens before and after.
OrderedJson interventions_json(const IntervenedEvaluation& e, std::size_t top_k);

}  // namespace attntrace
