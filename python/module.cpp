// The Python module attntrace._attntrace (python/attntrace/__init__.py
// re-exports it): run, check, cost and draft, each the library call its CLI
// command makes, with the interpreter released while C++ computes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "cost/cost.hpp"
#include "cost/cost_lesson.hpp"
#include "draft/article.hpp"
#include "draft/draft.hpp"
#include "lesson/config_fields.hpp"
#include "py_errors.hpp"
#include "py_hooks.hpp"
#include "py_inputs.hpp"
#include "py_run.hpp"
#include "render/cost_check.hpp"
#include "render/cost_view.hpp"

namespace py = pybind11;
using namespace attntrace;
using namespace attntrace::python;

namespace {

constexpr const char* kModuleDoc = R"(attntrace from Python: every number of a transformer's attention, computed and checked.

    run = attntrace.run("lessons/003-3.1-ring-fell.json")
    run["blocks.0.attn.hook_pattern"]      # a read-only numpy view of the trace's float32 buffer
    run.explain("blocks.0.attn.hook_pattern[h0, ring, fell]")
    attntrace.run(model="tests/models/tiny-gpt2", text="the ring fell")

Each function calls the library as the command of the same name does (docs/python.md). Bad input raises
attntrace.InputError (a ValueError) with the fields of the CLI's one-line error. run(..., hooks={name: fn})
changes a step as TransformerLens' hooks do.)";

constexpr DType kDTypes[] = {DType::fp32, DType::fp16, DType::bf16};

// The CLI's bounds on cost's flags, so that no product of them leaves 64 bits.
std::uint64_t bounded(const char* name, std::int64_t v, std::int64_t hi) {
    if (v < 1 || v > hi) fail_file(name, "a count from 1 to " + std::to_string(hi), std::to_string(v));
    return static_cast<std::uint64_t>(v);
}

py::object cost(std::int64_t tokens, std::int64_t d_model, std::int64_t heads, std::optional<std::int64_t> kv_heads,
                std::optional<std::int64_t> d_ff, const std::string& activation, std::int64_t layers, std::int64_t batch,
                const std::string& dtype, const std::string& attention, std::optional<std::int64_t> window) {
    CostSpec spec;
    spec.tokens = bounded("tokens", tokens, std::int64_t{1} << 30);
    spec.d_model = bounded("d_model", d_model, 1 << 20);
    spec.heads = bounded("heads", heads, 1 << 16);
    if (kv_heads) spec.kv_heads = bounded("kv_heads", *kv_heads, 1 << 16);
    if (d_ff) spec.d_ff = bounded("d_ff", *d_ff, 1 << 22);
    spec.layers = bounded("layers", layers, 1 << 16);
    spec.batch = bounded("batch", batch, 1 << 20);
    if (window) spec.window_size = bounded("window", *window, std::int64_t{1} << 30);
    // The activations as a lesson's config spells them; the dtypes by their names; the attention kinds as
    // `attntrace cost --attention` and a cost lesson's "attention" spell them.
    const auto act = spelling_value(activations(), activation);
    if (!act) fail_file("activation", spellings_expected(activations()), "\"" + activation + "\"");
    spec.activation = static_cast<Activation>(*act);
    const auto dt = std::find_if(std::begin(kDTypes), std::end(kDTypes), [&](DType d) { return dtype == dtype_name(d); });
    if (dt == std::end(kDTypes)) fail_file("dtype", "fp32, fp16 or bf16", "\"" + dtype + "\"");
    spec.dtype = *dt;
    const std::map<std::string, Window> windows{
        {"full", Window::full}, {"causal", Window::causal}, {"window", Window::symmetric}, {"causal-window", Window::causal_window}};
    const auto w = windows.find(attention);
    if (w == windows.end()) fail_file("attention", "full, causal, window or causal-window", "\"" + attention + "\"");
    spec.window = w->second;
    const bool windowed = spec.window == Window::symmetric || spec.window == Window::causal_window;
    if (windowed != (spec.window_size > 0))
        fail_file("window", windowed ? "a window size with attention=\"" + attention + "\"" : "attention=\"window\" or \"causal-window\" with window",
                  windowed ? "none" : "attention=\"" + attention + "\"");
    const OrderedJson j = cost_json(estimate_cost(spec, "cost"));
    return py::module_::import("json").attr("loads")(j.dump());
}

}  // namespace

PYBIND11_MODULE(_attntrace, m) {
    m.doc() = kModuleDoc;
    bind_errors(m);
    bind_run(m);
    for (const char* name : {"Run", "Claim", "Explanation", "Report"}) m.attr(name).attr("__module__") = "attntrace";
    m.def(
        "run",
        [](const py::object& lesson, const py::object& model, const py::object& text, const py::object& ids,
           const std::string& trace, const std::string& arithmetic, const py::object& blocks, std::optional<int> threads,
           const py::object& hooks) {
            RunArgs a = run_args("run", lesson, model, text, ids, blocks, threads);
            a.trace = trace;
            a.arithmetic = arithmetic;
            std::unique_ptr<Evaluation> e;
            if (!hooks.is_none()) {
                if (!py::isinstance<py::dict>(hooks)) throw py::type_error("hooks: expected a dict {step name: fn}");
                e = evaluate_hooked(a, hooks.cast<py::dict>());
            } else {
                py::gil_scoped_release free;
                e = evaluate_args(a);
            }
            return std::make_shared<RunState>(std::move(e), a.arithmetic == "document");
        },
        py::arg("lesson") = py::none(), py::kw_only(), py::arg("model") = py::none(), py::arg("text") = py::none(),
        py::arg("ids") = py::none(), py::arg("trace") = "full", py::arg("arithmetic") = "exact",
        py::arg("blocks") = py::none(), py::arg("threads") = py::none(), py::arg("hooks") = py::none(),
        R"(Runs a lesson (a path, an id as `attntrace list` shows, or a dict of its JSON), or a checkpoint folder
(model="DIR") on text="..." or ids=[...], as `attntrace run` does. trace: "full", "summary", "none" or step
names/globs separated by commas; arithmetic: "exact" or "document"; blocks: [0, 2] or "0,5-7" (a stack's blocks
to trace); threads: the kernels' threads (the numbers are the same whatever it is); hooks: {step name: fn},
TransformerLens' hooks: fn(values, name) is called with each hooked step's values (a numpy copy) once it is
computed, in pipeline order, and an array it returns replaces them (everything after is computed again from it;
None changes nothing). Returns an attntrace.Run.)");
    m.def(
        "check",
        [](const py::object& lesson, std::optional<int> threads) -> py::object {
            RunArgs a = run_args("check", lesson, py::none(), py::none(), py::none(), py::none(), threads);
            std::vector<ClaimResult> results;
            OrderedJson cost;
            {
                py::gil_scoped_release free;
                // A cost lesson (docs/cost.md), by its "format", as `attntrace check` tells them apart.
                const std::string file = a.path ? resolve_lesson(*a.path) : std::string();
                if (a.path && is_cost_lesson(load_json_file(file, lesson_json_limits()))) {
                    const CostLesson l = read_cost_lesson(file);
                    cost = cost_check_json(l, check_cost_lesson(l));
                } else {
                    results = evaluate_args(a)->report.results;
                }
            }
            if (!cost.is_null()) return py::module_::import("json").attr("loads")(cost.dump());
            return py::cast(std::move(results));
        },
        py::arg("lesson"), py::kw_only(), py::arg("threads") = py::none(),
        "The lesson's claims with their verdicts (a list of attntrace.Claim), as `attntrace check` gives them; for a "
        "cost lesson (docs/cost.md), the dict `attntrace check --format json` prints for it.");
    m.def("cost", &cost, py::kw_only(), py::arg("tokens") = 1024, py::arg("d_model") = 768, py::arg("heads") = 12,
          py::arg("kv_heads") = py::none(), py::arg("d_ff") = py::none(), py::arg("activation") = "relu",
          py::arg("layers") = 1, py::arg("batch") = 1, py::arg("dtype") = "fp32", py::arg("attention") = "full",
          py::arg("window") = py::none(),
          "Memory and FLOPs of attention from the shapes alone, as `attntrace cost --json` (a dict; docs/cost.md).");
    m.def(
        "draft",
        [](const py::object& article, std::size_t example) {
            const std::string path = required_path(article, "article");
            OrderedJson lesson;
            {
                py::gil_scoped_release free;
                std::vector<Draft> drafts = draft_lessons(read_article(path));
                if (example < 1 || example > drafts.size())
                    fail_file("example", "an example of the article's " + std::to_string(drafts.size()) + " (1 to " +
                                             std::to_string(drafts.size()) + ")",
                              std::to_string(example));
                lesson = std::move(drafts[example - 1].lesson);
            }
            return py::module_::import("json").attr("loads")(lesson.dump());
        },
        py::arg("article"), py::kw_only(), py::arg("example") = 1,
        "The lesson drafted from an article (Markdown, HTML, a notebook, LaTeX or text) as a dict, as `attntrace draft`; "
        "attntrace.run(dict) runs it.");
}
