// A step as a user names it (a claim's "step", explain's STEP[...]): its full
// name, or the end of it ("hook_pattern", "attn.hook_pattern") when exactly
// one step of the catalogue ends so; and, when nothing matches, the nearest
// names, so that a typo gets its correction rather than a list to search.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/catalogue.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct StepLookup {
    const StepDef* def = nullptr;             // the step named, when exactly one
    std::vector<const StepDef*> ambiguous;    // a short name several steps end with
    std::vector<std::string> closest;         // nothing matched: the nearest names, best first
};

// Names longer than this get no suggestions (the distance is quadratic in the length).
inline constexpr std::size_t kMaxSuggestedNameLength = 200;

// `suggest`, when set, picks the steps worth suggesting (those a lesson records).
StepLookup lookup_step(const Catalogue& catalogue, std::string_view name,
                       const std::function<bool(const StepDef&)>& suggest = {});

// The at most `n` candidates nearest to `name` by edit distance (on the whole
// name, or on its last dotted part against theirs), within a third of the
// name's length (at least 2 edits); best first, ties in the candidates' order.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t n = 3);

// What `run --steps` picks from a trace, each pattern in turn: a number is the
// step so numbered in the text view (1-based, "── 14/15"); a stage's name
// every step of that stage ("softmax": the row max through hook_pattern); a
// name or glob as step_matches ("hook_pattern", "blocks.0.attn.*"), a glob
// ending in a stage's name and ".*" with that stage's output too
// ("softmax.*" includes hook_pattern); else a
// piece of a name ("pattern"). The first pattern that picks nothing is
// `unknown`, with the nearest step names.
struct StepSelection {
    std::vector<std::string> names;  // the steps picked, in the trace's order
    std::string unknown;             // a pattern that picked nothing ("" when none)
    std::vector<std::string> closest;
};
StepSelection select_steps(const Trace& trace, const std::vector<std::string>& patterns);

// For messages: the name quoted whole (up to kMaxSuggestedNameLength
// characters), and what it could have meant: `"hook_patern" (closest:
// blocks.0.attn.hook_pattern)`, or `"hook_pattern" (names 2 steps:
// blocks.0.attn.hook_pattern, blocks.1.attn.hook_pattern)`.
std::string lookup_failure(std::string_view name, const StepLookup& found);

}  // namespace attntrace
