// attntrace.Run, its claims, explanations and report, bound over the library's own calls.
#include "py_run.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

#include "check/check.hpp"
#include "core/error.hpp"
#include "evaluate/model_end.hpp"
#include "export/npy_export.hpp"
#include "export/trace_export.hpp"
#include "io/files.hpp"
#include "io/text_sink.hpp"
#include "render/explain.hpp"
#include "render/report.hpp"
#include "trace/step_lookup.hpp"
#include "py_inputs.hpp"

namespace py = pybind11;

namespace attntrace::python {

const Step& RunState::step(const std::string& name) const {
    const Trace& t = trace();
    if (const Step* s = t.find(name)) return *s;
    const StepLookup found = lookup_step(lesson().catalogue(), name, [&](const StepDef& d) { return t.find(d.name) != nullptr; });
    if (found.def)
        if (const Step* s = t.find(found.def->name)) return *s;
    const std::vector<std::string> recorded = lesson().recorded_step_names();
    if (std::find(recorded.begin(), recorded.end(), name) != recorded.end())
        throw py::key_error(name + ": a step of this lesson that trace=\"" + t.policy.describe() + "\" does not keep");
    throw py::key_error((found.ambiguous.empty() ? "no step " : "step ") + lookup_failure(name, found));
}

const Tensor& RunState::values(const Step& s) {
    if (s.holds_values()) return s.held();
    if (s.recorded == Record::summary)
        throw py::value_error(s.name + ": kept only as a summary under trace=\"" + trace().policy.describe() +
                              "\" (run with trace=\"full\", or a list naming it, for its values)");
    if (!is_derived(s)) throw py::value_error(s.name + ": no values (" + std::string(source_name(s.source)) +
                                              (s.note.empty() ? "" : ": " + s.note) + ")");
    py::gil_scoped_release free;
    std::lock_guard<std::mutex> lock(derived_mutex_);
    auto& kept = derived_[s.name];
    if (!kept) kept = std::make_unique<Tensor>(values_of(trace(), s).take());
    return *kept;
}

namespace {

std::vector<py::ssize_t> dims(const Shape& shape) { return {shape.begin(), shape.end()}; }

// A read-only view of t's buffer, kept alive by `owner` (the array's base).
py::array view(const Tensor& t, const py::object& owner) {
    std::vector<py::ssize_t> shape = dims(t.shape), strides(shape.size());
    py::ssize_t stride = sizeof(float);
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    py::array a(py::dtype::of<float>(), shape, strides, t.data.data(), owner);
    a.attr("setflags")(py::arg("write") = false);
    return a;
}

// A copy of a small tensor (a claim's printed or computed values), or None when empty.
py::object copy(const Tensor& t) {
    if (t.data.empty()) return py::none();
    py::array_t<float> a(dims(t.shape));
    std::memcpy(a.mutable_data(), t.data.data(), t.data.size() * sizeof(float));
    return a;
}

// An OrderedJson tree as Python objects (dicts keep its order), through Python's own JSON reader.
py::object to_python(const OrderedJson& j) { return py::module_::import("json").attr("loads")(j.dump()); }

struct Report {
    std::string html;
};

// The page inside an iframe of its own: its styles and Content-Security-Policy stay its own, as a file's would.
std::string framed(const std::string& html) {
    std::string escaped;
    escaped.reserve(html.size() + html.size() / 8);
    for (char c : html) {
        if (c == '&') escaped += "&amp;";
        else if (c == '"') escaped += "&quot;";
        else escaped += c;
    }
    return "<iframe srcdoc=\"" + escaped + "\" style=\"width: 100%; height: 720px; border: 0\"></iframe>";
}

RunState& state(const py::object& self) { return self.cast<RunState&>(); }

void bind_results(py::module_& m) {
    py::class_<ClaimResult>(m, "Claim", "A claim of the lesson (what the article prints for a step) and its verdict.")
        .def_property_readonly("id", [](const ClaimResult& r) { return r.claim.id; })
        .def_property_readonly("step", [](const ClaimResult& r) { return r.claim.step; })
        .def_property_readonly("verdict", [](const ClaimResult& r) { return std::string(verdict_name(r.verdict)); },
                               "agrees, agrees-when-rounded, agrees-from-given, disagrees or not-checkable")
        .def_property_readonly("expected", [](const ClaimResult& r) { return std::string(verdict_name(r.claim.expect)); },
                               "The verdict the lesson expects")
        .def_property_readonly("as_expected", &ClaimResult::as_expected)
        .def_property_readonly("basis", [](const ClaimResult& r) { return std::string(basis_text(r.basis)); })
        .def_property_readonly("printed", [](const ClaimResult& r) { return copy(r.claim.values); },
                               "The article's numbers (None for a shape claim)")
        .def_property_readonly("computed", [](const ClaimResult& r) { return copy(r.computed); },
                               "The same cells computed exactly (None when not checkable)")
        .def_property_readonly("document", [](const ClaimResult& r) { return copy(r.document); },
                               "The same cells in document arithmetic (None when the lesson rounds nothing)")
        .def_property_readonly("max_deviation", [](const ClaimResult& r) { return r.max_deviation; })
        .def_property_readonly("cells_off", [](const ClaimResult& r) { return r.cells_off; })
        .def_property_readonly("reason", [](const ClaimResult& r) { return r.reason; })
        .def_property_readonly("quote", [](const ClaimResult& r) { return r.claim.quote; })
        .def_property_readonly("note", [](const ClaimResult& r) { return r.claim.note; })
        .def("__repr__", [](const ClaimResult& r) {
            return "<attntrace.Claim " + r.claim.id + " (" + r.claim.step + "): " + std::string(verdict_name(r.verdict)) + ">";
        });
    py::class_<Explanation>(m, "Explanation", "How one number of the trace came to be (str() is the text).")
        .def_readonly("text", &Explanation::text)
        .def_readonly("traced", &Explanation::traced, "The trace's value at the cell")
        .def_readonly("recomputed", &Explanation::recomputed,
                      "The value recomputed term by term (None when the lesson gave it, or it is not computable)")
        .def("__str__", [](const Explanation& e) { return e.text; })
        .def("__repr__", [](const Explanation& e) { return e.text; });
    py::class_<Report>(m, "Report", "The HTML report of a run (`html`: the page `attntrace report` writes).")
        .def_readonly("html", &Report::html)
        .def("__repr__", [](const Report& r) { return "<attntrace.Report: " + std::to_string(r.html.size()) + " bytes of HTML>"; })
        .def("_repr_html_", [](const Report& r) { return framed(r.html); })
        .def(
            "save",
            [](const Report& r, const py::object& path) {
                const std::string p = required_path(path, "path");
                py::gil_scoped_release free;
                write_file_atomic(p, r.html);
            },
            py::arg("path"), "Writes the page to `path` (replaced only once whole).");
}

}  // namespace

void bind_run(py::module_& m) {
    bind_results(m);
    py::class_<RunState, std::shared_ptr<RunState>>(m, "Run", "An evaluated lesson: attntrace.run(...) returns one.")
        .def("__getitem__", [](const py::object& self, const std::string& name) {
            RunState& s = state(self);
            return view(s.values(s.step(name)), self);
        }, py::arg("step"), "The step's values: a read-only float32 numpy view of the trace's buffer (no copy)")
        .def("__contains__", [](const RunState& s, const std::string& name) {
            try {
                s.step(name);
                return true;
            } catch (const py::key_error&) {
                return false;
            }
        })
        .def("__len__", [](const RunState& s) { return s.trace().steps.size(); })
        .def("__iter__", [](const RunState& s) {
            py::list names;
            for (const Step& st : s.trace().steps) names.append(st.name);
            return names.attr("__iter__")();
        })
        .def_property_readonly("steps", [](const RunState& s) {
            std::vector<std::string> names;
            for (const Step& st : s.trace().steps) names.push_back(st.name);
            return names;
        }, "The trace's step names, in the order computed")
        .def_property_readonly("tokens", [](const RunState& s) { return s.lesson().tokens; })
        .def_property_readonly("id", [](const RunState& s) { return s.lesson().id; })
        .def_property_readonly("file", [](const RunState& s) { return s.lesson().file; }, "The lesson file read")
        .def_property_readonly("title", [](const RunState& s) { return s.lesson().title; })
        .def_property_readonly("warnings", [](const RunState& s) { return s.trace().warnings; })
        .def_property_readonly("claims", [](const RunState& s) { return s.evaluation().report.results; },
                               "Each claim with its verdict (attntrace.Claim)")
        .def("axes", [](const RunState& s, const std::string& n) { return s.step(n).axes; }, py::arg("step"))
        .def("labels", [](const RunState& s, const std::string& n) { return s.step(n).labels; }, py::arg("step"),
             "Per axis, the label of each index: tokens, h0, d0, ...")
        .def("shape", [](const RunState& s, const std::string& n) { return py::tuple(py::cast(s.step(n).shape)); },
             py::arg("step"))
        .def("formula", [](const RunState& s, const std::string& n) { return formula_of(s.step(n)); }, py::arg("step"))
        .def("meaning", [](const RunState& s, const std::string& n) { return meaning_of(s.step(n)); }, py::arg("step"))
        .def("formula_values", [](const py::object& self, const std::string& n) -> py::object {
            const Step& st = state(self).step(n);
            if (!st.formula || st.formula->data.empty()) return py::none();
            return view(*st.formula, self);
        }, py::arg("step"), "A given step's formula values (the lesson's replaced them downstream), else None")
        .def("source", [](const RunState& s, const std::string& n) { return std::string(source_name(s.step(n).source)); },
             py::arg("step"), "computed, given (the lesson's values replace the formula's) or not-computable")
        .def("explain", [](const RunState& s, const std::string& cell, int precision, bool full) {
            if (precision < 0 || precision > 9) fail_file("precision", "decimals from 0 to 9", std::to_string(precision));
            py::gil_scoped_release free;
            ExplainOptions o;
            o.precision = precision;
            o.full = full;
            return explain_cell(s.lesson(), s.trace(), parse_cell(s.trace(), cell), o);
        }, py::arg("cell"), py::arg("precision") = 4, py::arg("full") = false,
             "How one number came to be: explain(\"blocks.0.attn.hook_pattern[h0, ring, fell]\"), as `attntrace explain`")
        .def("report", [](const RunState& s) {
            Report r;
            py::gil_scoped_release free;
            StringSink out(r.html);
            write_report_html(out, s.lesson(), s.trace(), s.evaluation().report);
            return r;
        }, "The HTML report (attntrace.Report; shown inline in a notebook)")
        .def("save", [](const RunState& s, const py::object& path) {
            const std::string p = required_path(path, "path");
            py::gil_scoped_release free;
            AtomicFile out(p);
            write_trace_json(out, s.lesson(), s.trace(), &s.evaluation().report);
            out.commit();
        }, py::arg("path"), "Writes the trace as `attntrace export -o PATH` does")
        .def("save_npy", [](const RunState& s, const py::object& dir) {
            const std::string d = required_path(dir, "dir");
            py::gil_scoped_release free;
            write_npy_export(d, s.lesson(), s.trace());
        }, py::arg("dir"), "Writes each step as DIR/<step>.npy and DIR/index.json, as `attntrace export --npy DIR`")
        .def("next_tokens", [](const RunState& s, std::size_t k) {
            if (k < 1 || k > 1000) fail_file("k", "a count from 1 to 1000", std::to_string(k));
            return to_python(model_end_json(s.lesson(), model_end(s.lesson(), s.trace(), k)));
        }, py::arg("k") = kNextTokensShown, "A model's next tokens after the last one, as `run --json` writes them")
        .def("__repr__", [](const RunState& s) {
            return "<attntrace.Run " + s.lesson().id + ": " + std::to_string(s.trace().steps.size()) + " steps, " +
                   std::to_string(s.evaluation().report.results.size()) + " claims>";
        });
}

}  // namespace attntrace::python
