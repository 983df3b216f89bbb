#include "py_hooks.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/closest.hpp"
#include "core/error.hpp"
#include "trace/derived.hpp"
#include "trace/step_lookup.hpp"

namespace py = pybind11;

namespace attntrace::python {

std::unique_ptr<Evaluation> evaluate_hooked(const RunArgs& a, const py::dict& hooks) {
    if (a.arithmetic != "exact")
        fail_file("hooks", "arithmetic=\"exact\" beside them (a hook changes the exact run)", "arithmetic=\"" + a.arithmetic + "\"");
    std::vector<std::pair<std::string, py::object>> given;
    for (const auto& [key, fn] : hooks) {
        if (!py::isinstance<py::str>(key)) throw py::type_error("hooks: expected step names (str) as keys");
        if (!PyCallable_Check(fn.ptr()))
            throw py::type_error(fmt::format("hooks[\"{}\"]: expected a callable fn(values, name)", key.cast<std::string>()));
        given.emplace_back(key.cast<std::string>(), py::reinterpret_borrow<py::object>(fn));
    }
    Lesson lesson;
    {
        py::gil_scoped_release free;
        lesson = read_args_lesson(a);
    }
    // In pipeline order; each name a step this run records.
    const std::vector<std::string> names = lesson.recorded_step_names();
    std::vector<std::string> keep;
    for (const auto& [name, fn] : given)
        if (std::find(names.begin(), names.end(), name) == names.end())
            fail_field("hooks", name, "a step this run records (run.steps lists them)",
                       "\"" + name + "\"" + closest_note(closest_steps(name, names)));
    std::sort(given.begin(), given.end(), [&](const auto& x, const auto& y) {
        return std::find(names.begin(), names.end(), x.first) < std::find(names.begin(), names.end(), y.first);
    });
    for (const auto& g : given) keep.push_back(g.first);
    std::unique_ptr<Evaluation> e;
    {
        py::gil_scoped_release free;
        e = evaluate_lesson(a, lesson, keep);
    }
    for (const auto& [name, fn] : given) {
        const Step* s = e->exact.find(name);
        if (!s || s->source == StepSource::not_computable || !(s->recorded == Record::full))
            fail_field("hooks", name, "a step with values to hand the hook", s ? s->note : "no such step");
        const Tensor v = values_of(e->exact, *s).take();
        std::vector<py::ssize_t> shape(s->shape.begin(), s->shape.end());
        py::array_t<float> values(shape);
        std::memcpy(values.mutable_data(), v.data.data(), v.size() * sizeof(float));
        const py::object out = fn(values, name);
        if (out.is_none()) continue;
        const auto arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(out);
        if (!arr) throw py::type_error(fmt::format("hooks[\"{}\"]: expected an array (or None) back", name));
        Shape got(arr.shape(), arr.shape() + arr.ndim());
        if (got != s->shape)
            fail_field("hooks", name, fmt::format("an array of the step's shape {}", shape_str(s->shape)), shape_str(got));
        Tensor t(s->shape);
        std::memcpy(t.data.data(), arr.data(), t.size() * sizeof(float));
        lesson.given[name] = Given{std::move(t), {}, fmt::format("hooks[\"{}\"]", name)};
        py::gil_scoped_release free;
        e = evaluate_lesson(a, lesson, keep);
    }
    return e;
}

}  // namespace attntrace::python
