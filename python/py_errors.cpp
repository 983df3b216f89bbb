// attntrace.InputError: the library's InputError as a Python exception with its fields.
#include "py_errors.hpp"

#include <string>

#include "core/error.hpp"

namespace py = pybind11;

namespace attntrace::python {

namespace {

const char* kind_name(ErrorKind k) {
    switch (k) {
        case ErrorKind::invalid: return "invalid";
        case ErrorKind::missing_field: return "missing_field";
        case ErrorKind::unknown_field: return "unknown_field";
        case ErrorKind::unknown_step: return "unknown_step";
    }
    return "invalid";
}

// The class, created once at import and kept for the life of the interpreter
// (a module's exception classes are never unloaded).
PyObject* input_error_type = nullptr;

void raise_input_error(const InputError& e) {
    const ErrorFields& f = e.fields();
    py::object error = py::reinterpret_borrow<py::object>(input_error_type)(e.what());
    error.attr("file") = f.file;
    error.attr("path") = f.path;
    error.attr("expected") = f.expected;
    error.attr("found") = f.found;
    error.attr("kind") = kind_name(f.kind);
    error.attr("byte") = f.byte ? py::cast(*f.byte) : py::none();
    py::list within;
    for (const ErrorPlace& p : f.within) within.append(py::make_tuple(p.file, p.path));
    error.attr("within") = within;
    PyErr_SetObject(input_error_type, error.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
    py::dict body;
    body["__doc__"] =
        "Bad input (a lesson, a flag, a trace, an output path): the one line attntrace prints, with its parts as\n"
        "attributes: file (the file, or the argument, the input came from), path (the field path in it, e.g.\n"
        "'config.heads'; '' when none applies), expected, found, kind ('invalid', 'missing_field',\n"
        "'unknown_field', 'unknown_step'), byte (an offset, or None) and within (the (file, path) places that\n"
        "led to it, outermost first). Read the attributes, not the message.";
    input_error_type = PyErr_NewException("attntrace.InputError", PyExc_ValueError, body.ptr());
    if (!input_error_type) throw py::error_already_set();
    m.add_object("InputError", py::reinterpret_borrow<py::object>(input_error_type));
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const InputError& e) {
            raise_input_error(e);
        }
    });
}

}  // namespace attntrace::python
