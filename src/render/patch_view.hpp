// `attntrace patch` for people (a heatmap of the normalised logit difference,
// blocks down, heads or positions across) and machines (JSON, format
// "attntrace-patch", docs/interventions.md).
#pragma once

#include <ostream>

#include "evaluate/patch.hpp"
#include "render/heatmap.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The --json report's shape; bumped when a field changes meaning or goes.
inline constexpr int kPatchReportVersion = 1;

struct PatchInputs {
    std::string model_dir;
    const Lesson* clean = nullptr;
    const Lesson* corrupt = nullptr;
    std::string clean_text, corrupt_text;
    double seconds = 0;  // the whole experiment's wall time
};

void render_patch(std::ostream& out, const PatchInputs& in, const PatchResult& r, const TermStyle& style);
OrderedJson patch_json(const PatchInputs& in, const PatchResult& r);

}  // namespace attntrace
