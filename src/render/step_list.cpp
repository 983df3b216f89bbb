#include "render/step_list.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/printable.hpp"

namespace attntrace {

void render_step_list(std::ostream& out, const Lesson& lesson) {
    const Catalogue& cat = lesson.catalogue();
    std::vector<const StepDef*> steps;
    for (const StepDef& d : cat.steps())
        if (lesson.records(d)) steps.push_back(&d);
    std::size_t w = 4;
    for (const StepDef* d : steps) w = std::max(w, d->name.size());
    out << fmt::format("{} — {} steps, stages {} → {}{}\n", printable(lesson.id), steps.size(), stage_name(lesson.from),
                       stage_name(lesson.to), lesson.batch ? " (each sequence's; the trace adds a leading batch axis)" : "");
    out << fmt::format("{:>4}  {:<{}}  {:<8} {:<12} {}\n", "#", "step", w, "stage", "shape", "axes");
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const StepDef& d = *steps[k];
        const Shape shape = step_shape(d, lesson.dims_of(cat.pass_of(d)));
        std::string axes;
        for (Axis a : d.axes) axes += (axes.empty() ? "" : " x ") + std::string(axis_name(a));
        out << fmt::format("{:>4}  {:<{}}  {:<8} {:<12} {}\n", k + 1, d.name, w, stage_name(d.stage), shape_str(shape), axes);
    }
    out << "\n`run --steps` takes a number, a stage, a name (its end is enough: hook_pattern) or a piece of one.\n";
}

}  // namespace attntrace
