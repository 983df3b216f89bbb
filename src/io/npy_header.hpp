// The header of a .npy file: a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, parsed by
// hand (io/npy.hpp says why we read .npy ourselves). Only its syntax is
// checked here; what the values mean (a dtype we read, the size) is npy.cpp's.
#pragma once

#include <cstddef>
#include <string>

#include "core/tensor.hpp"

namespace attntrace {

struct NpyHeader {
    std::string descr;     // e.g. "<f4"
    bool fortran = false;  // fortran_order
    Shape shape;           // each size from 1 to kMaxElements
    std::size_t descr_at = 0, fortran_at = 0, shape_at = 0;  // byte offsets of the values in the file
};

// `text` is the header as stored, `base` its byte offset in the file: every
// error names the byte where the header stops making sense, as
// "FILE: byte N: expected ..., found ..." (InputError).
NpyHeader parse_npy_header(const std::string& text, std::size_t base, const std::string& file);

// Python's tuple of sizes, as numpy writes a shape: (), (3,), (3, 4).
std::string npy_shape_repr(const Shape& s);

}  // namespace attntrace
