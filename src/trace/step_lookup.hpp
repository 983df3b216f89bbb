// A step as a user names it (a claim's "step", explain's STEP[...]): its full
// name, or the end of it ("hook_pattern", "attn.hook_pattern") when exactly
// one step of the catalogue ends so; and, when nothing matches, the nearest
// names, so that a typo gets its correction rather than a list to search.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "core/closest.hpp"
#include "trace/catalogue.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct StepLookup {
    const StepDef* def = nullptr;             // the step named, when exactly one
    std::vector<const StepDef*> ambiguous;    // a short name several steps end with
    std::vector<std::string> closest;         // nothing matched: the nearest names, best first
};

// `suggest`, when set, picks the steps worth suggesting (those a lesson records).
StepLookup lookup_step(const Catalogue& catalogue, std::string_view name,
                       const std::function<bool(const StepDef&)>& suggest = {});

// Step names as closest_names (core/closest.hpp) holds a typo to them: by
// their last dotted parts, "hook_" optional ("patern": hook_pattern).
inline constexpr NameParts kStepNameParts{'.', false, "hook_"};
inline std::vector<std::string> closest_steps(std::string_view name, const std::vector<std::string>& candidates,
                                              std::size_t n = 3) {
    return closest_names(name, candidates, n, kStepNameParts);
}

// What `run --steps` (and compare's and diff's --step) picks, each pattern in
// turn, by the first of these ways of naming that picks anything:
//   1. a number: the step so numbered in the text view (1-based, "── 14/15");
//      outside 1..N nothing else is tried (`number` says so);
//   2. a name or glob as step_matches ("hook_pattern", "blocks.0.attn.*"), a
//      glob ending in a stage's name and ".*" with that stage's output too
//      ("softmax.*" includes hook_pattern);
//   3. the whole last part of a name, "hook_" optional ("k": hook_k, not
//      hook_kv_head; "var": ln1's and ln2's hook_var);
//   4. a stage's name (softmax: the row max through hook_pattern), whole
//      dotted parts of names ("ln1", "attn", "blocks.1"), or a piece of a
//      name's last part at least kMinNamePiece long ("scores": the stage's
//      hook_scores_raw and hook_scores_scaled, hook_attn_scores), all at once;
//   5. a word of the steps' titles ("weights": "Attention weights A"), a
//      plural's "s" optional, in any case.
// The first pattern that picks nothing is `unknown`, with the nearest step
// names, stages and title words.
struct StepSelection {
    std::vector<std::string> names;  // the steps picked, in the trace's order
    std::string unknown;             // a pattern that picked nothing ("" when none)
    std::vector<std::string> closest;
    bool number = false;             // `unknown` is a number outside 1..count
    std::size_t count = 0;           // the steps there are to pick from
};

// A piece shorter than this is matched only whole: one letter is in half the
// names ("k" in "blocks", "v" in "hook_var").
inline constexpr std::size_t kMinNamePiece = 2;

// A step as a pattern may name it: its name, and its definition (stage and
// title) when known (null for a step read from a foreign trace).
struct NamedStep {
    NamedStep(std::string name_, const StepDef* def_, std::string title_ = {})
        : name(std::move(name_)), def(def_), title(std::move(title_)) {}
    std::string name;
    const StepDef* def = nullptr;
    std::string title;  // the step's own title where it has one (title_of: an RMSNorm's); empty: def's
};
StepSelection select_steps(const std::vector<NamedStep>& steps, const std::vector<std::string>& patterns);
StepSelection select_steps(const Trace& trace, const std::vector<std::string>& patterns);

// What an error line says it found: the pattern quoted, with the steps'
// range for a number ("\"99\" (steps are numbered 1 to 15)") or the
// nearest names ("\"patern\" (closest: blocks.0.attn.hook_pattern)").
std::string selection_found(const StepSelection& s);

// For messages: the name quoted whole (up to kMaxSuggestedNameLength
// characters), and what it could have meant: `"hook_patern" (closest:
// blocks.0.attn.hook_pattern)`, or `"hook_pattern" (names 2 steps:
// blocks.0.attn.hook_pattern, blocks.1.attn.hook_pattern)`.
std::string lookup_failure(std::string_view name, const StepLookup& found);

}  // namespace attntrace
