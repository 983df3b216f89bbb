// .npy files (numpy's array format, numpy.lib.format): one tensor per file,
// for exchanging weights and steps with numpy and PyTorch.
//
// Our own small reader and writer rather than xtensor's xnpy: xnpy neither
// reports where a malformed file goes wrong (we name the byte offset) nor
// bounds what a header may ask for (a 20-byte header can declare 10^15
// numbers); both matter for input that comes from outside.
//
// Layout of a file: "\x93NUMPY", major, minor, the header length (2 bytes
// little-endian in 1.0, 4 in 2.0), the header (a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces to a multiple of 64 bytes and ending in '\n'), then the data, row-major.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/tensor.hpp"

namespace attntrace {

// A header longer than this is refused: numpy's own default limit is 10000
// bytes, and ours (shape of rank 3 at most) needs under 128.
inline constexpr std::size_t kMaxNpyHeaderBytes = 65536;

// The whole file as bytes: format 1.0, '<f4', C order, header padded so the
// data starts at a multiple of 64 bytes (as numpy writes it). -inf and every
// other float are written as they are.
std::string npy_bytes(const Tensor& t);

// Writes `t` to `path` through a temporary file and rename (io/files.hpp);
// errors name `shown` when given (the file as the user will see it).
void write_npy(const std::string& path, const Tensor& t, const std::string& shown = "");

// What the reader accepts besides finite numbers.
struct NpyRead {
    bool allow_neg_inf = false;  // masks and scores hold -inf; nothing holds +inf or NaN
    std::size_t max_rank = 3;    // a lesson's tensors; a batched trace's steps are rank 4
    // Called with the declared shape and its element count once the header is
    // checked against the file size and kMaxElements, before anything is
    // allocated: the caller's memory budget (it throws to refuse).
    std::function<void(const Shape&, std::size_t)> before_alloc;
};

// Reads a .npy file: versions 1.0 and 2.0 (numpy writes 1.0 unless a header
// needs more than 65535 bytes; 3.0, for non-ASCII field names, is refused), dtypes '<f4' and '<f8' (then
// converted to float32, refusing a value beyond float32's range), C order,
// rank 0 to options.max_rank (3). Anything else, and a NaN or infinite value (-inf only with
// allow_neg_inf), throws InputError: "PATH: byte N: expected ..., found ..."
// for the file's structure, "PATH: [i,j]: expected ..., found ..." for a value.
Tensor read_npy(const std::string& path, const NpyRead& options = {});

}  // namespace attntrace
