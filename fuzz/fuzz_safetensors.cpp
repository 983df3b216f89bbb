// Fuzz target: the safetensors header reader (io/safetensors.hpp), on the
// input as a whole file. Bytes in; the only acceptable outcomes are a header
// or an InputError. A header that reads is held to what the reader promises:
// the tensors tile the data in order, and each F32, F16 or BF16 tensor
// converts to as many floats as its shape (or is refused for a non-finite value).
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    StHeader h;
    try {
        h = parse_safetensors_header(data, size, size, "fuzz.safetensors");
    } catch (const InputError&) {
        return 0;
    }
    std::size_t at = 0;
    for (const auto& t : h.tensors) {
        if (t.begin != at || t.end < t.begin || h.data_offset + t.end > size) __builtin_trap();
        at = t.end;
        if (t.dtype != StDtype::f32 && t.dtype != StDtype::f16 && t.dtype != StDtype::bf16) continue;
        try {
            const Tensor f = st_to_float(t, data + h.data_offset, "fuzz.safetensors");
            if (f.size() * dtype_bytes(t.dtype) != t.end - t.begin) __builtin_trap();
        } catch (const InputError&) {
        }
    }
    if (h.data_offset + at != size) __builtin_trap();
    return 0;
}
