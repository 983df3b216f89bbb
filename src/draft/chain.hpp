// A drafted lesson run and scored, and refined by the article's own chain and
// rounding: the part of `attntrace draft`'s search that, for one start under
// one convention, decides which printed steps are `given` (the article's
// values carried on where its formula would give others) and which are
// `document_rounding` (its values rounded before the next step used them).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "draft/place.hpp"
#include "draft/printed.hpp"
#include "evaluate/evaluate.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The given and rounding trials tried at most this many times each: a search that stays a few runs long.
inline constexpr std::size_t kMaxChainTrials = 12;

// A lesson run, and each candidate array placed on it.
struct Scored {
    std::vector<Placement> placements;  // per candidate
    std::size_t agree = 0, total = 0;
    bool ran = false;
    std::string error;  // why the lesson did not run, when it did not
};

// A lesson refined from a base, with why each given and rounding was kept.
struct Refined {
    OrderedJson lesson;
    Scored score;
    std::vector<std::string> reasons, steps;  // why each was kept; "given q" for the trials' list
};

// The lesson evaluated (InputError when it cannot run).
std::unique_ptr<Evaluation> run_lesson(const OrderedJson& lesson);

// The most printed input values whose effect the search measures (one run each, for each convention
// tried): a few hundred runs of a small lesson stay well under a second. Past it, no slack.
inline constexpr std::size_t kMaxSlackValues = 256;

// The lesson run, and each candidate placed on the exact run or, where the lesson rounds, the document run
// (within `slack` where there is one: place.hpp).
Scored score(const OrderedJson& lesson, const Article& art, const std::vector<std::size_t>& candidates,
             const Slack* slack = nullptr);

// How far each step may move with the rounding of the lesson's input_decimals inputs (place.hpp's Slack):
// one run per printed value, moved by half its last digit; empty without input_decimals, past
// kMaxSlackValues values, or when the lesson does not run.
Slack input_rounding_slack(const OrderedJson& lesson);

// The base lesson with the article's chain and rounding that make the most of the candidates' printed
// numbers agree (docs/drafting.md, steps 4 and 5).
Refined refine(OrderedJson lesson, const Article& art, const std::vector<std::size_t>& candidates);

// "blocks.0.attn.hook_scores_raw" -> "scores_raw": a claim's id when the article names nothing.
std::string step_leaf(const std::string& step);

}  // namespace attntrace
