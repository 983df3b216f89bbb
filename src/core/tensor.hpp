// Tensor: a dense row-major float buffer with a shape of rank 0..4 (a batched
// trace's steps add a leading batch axis).
//
// The trace owns one Tensor per step and the pipeline's kernels write straight
// into Tensor::data (raw pointers, shapes in comments). We do not use
// xt::xarray here: a dynamic-rank container whose buffer the trace owns and the
// kernels fill is all the pipeline needs, and keeping xtensor out of the
// library headers keeps every translation unit light (one xtensor include
// cost ~20 s of compile time). A program using the library sees a
// Tensor or a step as an xtensor expression through trace/xview.hpp (a
// zero-copy view), which no library file includes. The independent scalar
// reference in tests/ is written with xtensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <string>
#include <vector>

namespace attntrace {

using Shape = std::vector<std::size_t>;

// Big buffers (a step of several MiB) come in 2 MiB-aligned blocks marked for
// transparent huge pages: one page fault per 2 MiB instead of per 4 KiB.
// Writing a fresh 200 MiB buffer took 136 ms with 4 KiB pages and 78 ms with
// huge pages here (THP in "madvise" mode, Linux 6.1). Defined in tensor.cpp.
inline constexpr std::size_t kHugeBufferBytes = std::size_t{4} << 20;
void* allocate_big_buffer(std::size_t bytes);  // throws std::bad_alloc
void free_big_buffer(void* p, std::size_t bytes) noexcept;
// Bench only: keep freed big buffers and hand them to the next request of the
// same size, so that repeated runs of one shape reuse pages already faulted
// in (as a long-lived process tracing many inputs would, and as PyTorch's
// caching allocator does). Off (the default) frees everything kept: a single
// run's memory stays what its plan estimated.
void set_big_buffer_reuse(bool on);

// An allocator that leaves new floats uninitialised instead of zeroing them:
// every kernel writes every element of the step it fills, and zeroing a
// BERT-sized trace first was a whole extra pass over it on every run.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
    T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_alloc();
        if (n * sizeof(T) >= kHugeBufferBytes) return static_cast<T*>(allocate_big_buffer(n * sizeof(T)));
        return std::allocator<T>::allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) >= kHugeBufferBytes) free_big_buffer(p, n * sizeof(T));
        else std::allocator<T>::deallocate(p, n);
    }
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    using std::allocator<T>::allocator;
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;  // default-initialisation: no zeroing
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

using FloatBuffer = std::vector<float, DefaultInitAllocator<float>>;

struct Tensor {
    Shape shape;
    FloatBuffer data;

    Tensor() = default;
    // Every element set to `fill`.
    explicit Tensor(Shape s, float fill = 0.0f);
    // Elements left unset: for buffers a kernel overwrites whole.
    static Tensor uninitialized(Shape s);

    std::size_t size() const { return data.size(); }
    std::size_t rank() const { return shape.size(); }
    float* ptr() { return data.data(); }
    const float* ptr() const { return data.data(); }
};

// Number of elements of a shape. The caller has bounded the dimensions
// (lesson validation refuses products above kMaxElements), so no overflow here.
std::size_t numel(const Shape& s);

// Product of dimensions with overflow detection: false when a*b*... would
// exceed `limit`. Used before any allocation sized by user input.
bool checked_numel(const Shape& s, std::size_t limit, std::size_t& out);

// "3x4", "2x3x3", "scalar"
std::string shape_str(const Shape& s);
// For messages: "a 3x4 array", "an array of 8", "a single number"
std::string array_text(const Shape& s);

// The transpose of a matrix: (r, c) -> (c, r), element [j][i] = m[i][j].
Tensor transposed(const Tensor& m);

// Drop axes of size 1: (1,3,3) -> (3,3). Used to accept a single head's matrix
// where the step holds (heads, T, T) with heads = 1.
Shape squeeze(const Shape& s);

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace attntrace
