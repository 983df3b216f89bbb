#include "render/step_list.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/printable.hpp"
#include "render/text_table.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// "3x4x8" (as shape_str), T for a token axis when the tokens are symbolic.
std::string shape_text(const StepDef& d, const Shape& shape, bool symbolic_tokens) {
    if (!symbolic_tokens) return shape_str(shape);
    std::string out;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const bool token = k < d.axes.size() && (d.axes[k] == Axis::pos || d.axes[k] == Axis::query || d.axes[k] == Axis::key);
        out += (k ? "x" : "") + (token ? std::string("T") : std::to_string(shape[k]));
    }
    return out.empty() ? shape_str(shape) : out;
}

}  // namespace

void render_step_list(std::ostream& out, const Lesson& lesson, std::size_t width, bool symbolic_tokens) {
    const Catalogue& cat = lesson.catalogue();
    std::vector<const StepDef*> steps;
    for (const StepDef& d : cat.steps())
        if (lesson.records(d)) steps.push_back(&d);
    out << wrap_text(fmt::format("{} — {} steps, stages {} → {}{}", printable(lesson.id), steps.size(),
                                 stage_name(lesson.from), stage_name(lesson.to),
                                 lesson.batch ? " (each sequence's; the trace adds a leading batch axis)"
                                 : symbolic_tokens ? " (T: the text's tokens)"
                                                   : ""),
                     width, "", "    ");
    const std::vector<TextColumn> columns{{"#", true}, {"step"}, {"stage"}, {"shape"}, {"axes"}};
    std::vector<std::vector<std::string>> rows;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const StepDef& d = *steps[k];
        const Shape shape = step_shape(d, lesson.dims_of(cat.pass_of(d)));
        // "query x head x d_head": a line breaks only after an " x"
        std::string axes;
        for (Axis a : d.axes) axes += (axes.empty() ? "" : std::string(1, kNoBreak) + "x ") + std::string(axis_name(a));
        rows.push_back({std::to_string(k + 1), d.name, std::string(stage_name(d.stage)), shape_text(d, shape, symbolic_tokens), axes});
    }
    out << format_text_table(columns, rows, width, "  ");
    out << "\n"
        << wrap_text("`run --steps` takes a number, a stage, a name (its end is enough: hook_pattern) or a piece of one.",
                     width, "", "");
}

}  // namespace attntrace
