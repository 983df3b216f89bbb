// A Python call's lesson or checkpoint, policy and threads, read and evaluated as `attntrace run` does.
#include "py_inputs.hpp"

#include <omp.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/hf_model.hpp"
#include "model/model_lesson.hpp"
#include "trace/policy.hpp"

namespace py = pybind11;

namespace attntrace::python {

namespace {

std::string type_name(const py::handle& o) { return py::str(py::type::handle_of(o).attr("__name__")); }

[[noreturn]] void wrong_type(const std::string& function, const char* what, const char* expected, const py::handle& o) {
    throw py::type_error(fmt::format("{}(): {}: expected {}, found {}", function, what, expected, type_name(o)));
}

}  // namespace

std::optional<std::string> optional_path(const py::object& o, const char* what) {
    if (o.is_none()) return std::nullopt;
    if (py::isinstance<py::str>(o)) return o.cast<std::string>();
    if (py::hasattr(o, "__fspath__")) {
        py::object p = py::module_::import("os").attr("fspath")(o);
        if (py::isinstance<py::str>(p)) return p.cast<std::string>();
    }
    throw py::type_error(fmt::format("{}: expected a path (str or os.PathLike), found {}", what, type_name(o)));
}

std::string required_path(const py::object& o, const char* what) {
    if (o.is_none()) throw py::type_error(fmt::format("{}: expected a path (str or os.PathLike), found None", what));
    return *optional_path(o, what);
}

RunArgs run_args(const std::string& function, const py::object& lesson, const py::object& model, const py::object& text,
                 const py::object& ids, const py::object& blocks, std::optional<int> threads) {
    RunArgs a;
    a.function = function;
    if (py::isinstance<py::dict>(lesson)) {
        a.json = py::module_::import("json").attr("dumps")(lesson).cast<std::string>();
    } else if (!lesson.is_none()) {
        if (!py::isinstance<py::str>(lesson) && !py::hasattr(lesson, "__fspath__"))
            wrong_type(function, "lesson", "a lesson's path or id (str or os.PathLike) or a dict of its JSON", lesson);
        a.path = optional_path(lesson, "lesson");
    }
    if (!model.is_none()) {
        if (!py::isinstance<py::str>(model) && !py::hasattr(model, "__fspath__"))
            wrong_type(function, "model", "a checkpoint folder (str or os.PathLike)", model);
        a.model = optional_path(model, "model");
    }
    if (!text.is_none()) {
        if (!py::isinstance<py::str>(text)) wrong_type(function, "text", "a str", text);
        a.text = text.cast<std::string>();
    }
    if (!ids.is_none()) {
        if (py::isinstance<py::str>(ids) || !py::hasattr(ids, "__iter__"))
            wrong_type(function, "ids", "a sequence of token ids (ints)", ids);
        std::vector<std::int64_t> v;
        for (py::handle item : ids) {
            // bool is an int to Python; a token id written True is a mistake.
            if (py::isinstance<py::bool_>(item) || !py::hasattr(item, "__index__"))
                wrong_type(function, "ids", "token ids (ints)", item);
            auto index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
            if (!index) throw py::error_already_set();
            int overflow = 0;
            const long long id = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
            if (overflow) fail_field("ids", fmt::format("[{}]", v.size()), "a token id (a 64-bit integer)", py::str(index));
            v.push_back(id);
        }
        a.ids = std::move(v);
    }
    if (py::isinstance<py::str>(blocks)) {
        a.blocks = blocks.cast<std::string>();
    } else if (!blocks.is_none()) {
        if (!py::hasattr(blocks, "__iter__")) wrong_type(function, "blocks", "block numbers (a list of ints, or \"0,5-7\")", blocks);
        std::string list;
        for (py::handle b : blocks) {
            if (py::isinstance<py::bool_>(b) || !py::isinstance<py::int_>(b))
                wrong_type(function, "blocks", "block numbers (ints)", b);
            list += (list.empty() ? "" : ",") + py::str(b).cast<std::string>();
        }
        a.blocks = list;
    }
    if (threads && (*threads < 1 || *threads > 1024))
        fail_file("threads", "a number of threads from 1 to 1024", std::to_string(*threads));
    a.threads = threads.value_or(0);
    return a;
}

Lesson read_args_lesson(const RunArgs& a) {
    const std::string& f = a.function;
    const bool lesson = a.path || a.json;
    if (lesson == a.model.has_value()) fail_file(f, "a lesson or model=\"DIR\"", lesson ? "both" : "neither");
    if (!a.model) {
        if (a.text) fail_file("text", "model=\"DIR\" beside it (the checkpoint whose tokenizer reads it)", "no model");
        if (a.ids) fail_file("ids", "model=\"DIR\" beside it", "no model");
        return a.path ? read_any_lesson(*a.path) : parse_lesson(*a.json, "lesson (a dict)");
    }
    if (a.text && a.ids) fail_file("ids", "either text or ids", "both");
    if (!a.text && !a.ids) fail_file("model", "text=\"...\" or ids=[1, 2, 3] beside it", "neither");
    ModelInput in;
    in.text = a.text;
    if (a.ids) in.ids = *a.ids;
    in.text_source = "text";
    in.ids_source = "ids";
    return std::move(load_hf_model(*a.model, in).lesson);
}

std::unique_ptr<Evaluation> evaluate_args(const RunArgs& a) {
    if (a.arithmetic != "exact" && a.arithmetic != "document")
        fail_file("arithmetic", "exact or document", "\"" + a.arithmetic + "\"");
    return evaluate_lesson(a, read_args_lesson(a));
}

std::unique_ptr<Evaluation> evaluate_lesson(const RunArgs& a, Lesson lesson, const std::vector<std::string>& keep) {
    TracePolicy policy = parse_trace_policy(a.trace, "trace");
    if (a.arithmetic != "exact" && a.arithmetic != "document")
        fail_file("arithmetic", "exact or document", "\"" + a.arithmetic + "\"");
    policy.keep = keep;
    if (a.blocks) policy.blocks = parse_block_list(*a.blocks, lesson.config.arch.blocks, "blocks");
    require_policy_steps(policy, lesson.recorded_step_names(), "trace");
    ThreadsFor threads(a.threads);
    auto e = evaluate(std::move(lesson), policy);
    if (a.arithmetic == "document" && !e->document)
        fail_file(e->lesson.file, "arithmetic=\"document\": expected a lesson that names steps in document_rounding, "
                                  "found none");
    return e;
}

ThreadsFor::ThreadsFor(int n) : saved_(omp_get_max_threads()) {
    if (n > 0) omp_set_num_threads(n);
}
ThreadsFor::~ThreadsFor() { omp_set_num_threads(saved_); }

}  // namespace attntrace::python
