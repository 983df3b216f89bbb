// Claims (docs/lesson-format.md, Claims) and the layouts in which a lesson may
// write a step's values. Internal to the lesson reader.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

// What read_claim needs of the lesson being read.
struct ClaimContext {
    const Fields& f;
    const Lesson& lesson;  // its config, catalogue and run range are read already
    const Dims& dims;
    std::function<std::string(const StepDef&)> why_not_recorded;
};

// One claim at `path` ("claims[3]"): its step is one the lesson records, its
// `at` indices and values fit the step's selected part. Throws InputError.
Claim read_claim(const ClaimContext& ctx, const json& v, const std::string& path);

// A claim's or a partial given's `at` (object at `path`, "claims[3].at") on step `def`: each axis it
// names is fixed (an index or a label: removed from free_axes, added to `fixed`) or narrowed (a list
// or a range: added to `narrowed`). Throws InputError naming the axis's path.
void read_at(const Fields& f, const Lesson& lesson, const Dims& dims, const StepDef& def, const json& at,
             const std::string& path, std::vector<Axis>& free_axes, std::vector<std::pair<Axis, std::size_t>>& fixed,
             std::vector<std::pair<Axis, std::vector<std::size_t>>>& narrowed);

// Merge the last two axes: (T, NH, hs) -> (T, C).
Shape merge_last2(const Shape& s);
// The article's layout of a step: its shape, without axes of size 1, or with
// the heads side by side when it ends in (head, d_head) or (kv_head, d_head).
bool shape_accepts(const Shape& got, const Shape& want, bool heads_side_by_side);
bool ends_with_heads(const std::vector<Axis>& axes);
// "pos, head, d_head" (or "scalar").
std::string axes_text(const StepDef& def);

}  // namespace attntrace
