// `attntrace compare` for people (text) and machines (JSON, format
// "attntrace-compare", docs/compare.md): the settings A vs B, every step's
// change in pipeline order, then one step's A, B and B - A.
#pragma once

#include <optional>
#include <ostream>

#include "compare/compare.hpp"
#include "compare/lesson_override.hpp"
#include "render/heatmap.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The --json report's shape; bumped when a field changes meaning or goes.
inline constexpr int kCompareReportVersion = 1;

struct CompareView {
    int precision = 4;
    bool full = false;     // no elision of big matrices
    TermStyle style;       // colour and width (the CLI decides them)
    bool heatmap = true;   // heatmaps of A and B for the weights, the mask and the masked scores
    HeatmapMode heatmap_mode = HeatmapMode::automatic;
};

// `shown`: the step shown in full (index into c.steps), none to show none.
void render_compare(std::ostream& out, const LessonPair& pair, const Comparison& c, std::optional<std::size_t> shown,
                    bool chosen, const CompareView& view);
OrderedJson compare_to_json(const LessonPair& pair, const Comparison& c, std::optional<std::size_t> shown);

}  // namespace attntrace
