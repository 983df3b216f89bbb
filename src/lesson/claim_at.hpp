// One entry of a claim's `at` (docs/lesson-format.md, Claims): an index or a
// label fixes the axis; a list of them, or a range {"from", "to"}, keeps the
// axis narrowed to those positions. Internal to the claim reader.
#pragma once

#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "trace/steps.hpp"

namespace attntrace {

struct AxisPick {
    bool fixed = true;                 // an index or a label: the axis is gone
    std::vector<std::size_t> indices;  // fixed: one; else increasing, each once
};

// `labels`: the axis's labels as the trace shows them (Lesson::axis_labels),
// `extent`: its length. Throws InputError naming `path` (claims[2].at.query[1]).
AxisPick read_axis_pick(const Fields& f, const json& v, const std::string& path, Axis axis,
                        const std::vector<std::string>& labels, std::size_t extent);

}  // namespace attntrace
