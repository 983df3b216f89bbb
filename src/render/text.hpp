// Terminal renderings: a lesson's run step by step, and the check table.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "check/check.hpp"
#include "render/heatmap.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct RunView {
    int precision = 4;
    std::vector<std::string> steps;  // names or globs; empty: every step
    bool full = false;               // no elision of big matrices
    TermStyle style;                 // colour and width (the CLI decides them)
    bool heatmap = true;             // heatmaps under the weights, the mask and the masked scores
    HeatmapMode heatmap_mode = HeatmapMode::automatic;
    Pooling pool = Pooling::max;
};

// Each step: title, formula, shape, token-labelled values, explanation, and
// the article's claims beside the computed values; then the claims' tally
// (none when the lesson claims nothing: a checkpoint, a random lesson).
void render_run(std::ostream& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                const RunView& view);

// One row per claim, then the details of every disagreement.
// Verdicts coloured when style.color; reasons wrapped to style.width.
void render_check(std::ostream& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                  const TermStyle& style = {});

std::string_view verdict_mark(Verdict v);
// A row of check's table: `prefix` (the mark, the claim's id and its verdict
// in their columns), then `rest` wrapped to the width under the column it
// begins in (6 columns in when that column leaves too little room; on the
// next line when a long id leaves no room for its first word).
std::string check_row(std::string_view prefix, std::string_view rest, std::size_t width);
// "  UNEXPECTED (lesson expects agrees)", its parenthesis one word for the wrapping: a row's last words.
std::string unexpected_text(Verdict expected);
// "3 agree, 2 agree only from the article's given values": the summary lines' first counts.
std::string agree_counts(const CheckReport& report);

// The steps shown as heatmaps too (run, compare): where the eye wants the
// pattern, not the digits.
bool heatmapped(const Step& s);

// " (N of the agreements only check the article against its own given values)", or "".
std::string given_note(const CheckReport& report);

}  // namespace attntrace
