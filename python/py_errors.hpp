// Errors seen from Python. An InputError (core/error.hpp) becomes
// attntrace.InputError, a subclass of ValueError whose str() is the
// library's one line and whose attributes are its fields (file, path,
// expected, found, kind, byte, within), so that Python code reads the
// fields, never the message, as C++ code does. Every other exception is
// pybind11's: std::bad_alloc a MemoryError, std::invalid_argument a
// ValueError, the rest a RuntimeError; none ends the interpreter.
#pragma once

#include <pybind11/pybind11.h>

namespace attntrace::python {

// Defines attntrace.InputError in `m` and registers the translation.
void bind_errors(pybind11::module_& m);

}  // namespace attntrace::python
