#include "core/tensor.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

namespace attntrace {

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
std::size_t rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

struct BufferCache {
    std::mutex lock;
    bool on = false;
    std::multimap<std::size_t, void*> kept;  // rounded size -> block
};
BufferCache& cache() {
    static BufferCache c;
    return c;
}

}  // namespace

void* allocate_big_buffer(std::size_t bytes) {
    const std::size_t size = rounded(bytes);
    {
        BufferCache& c = cache();
        std::lock_guard<std::mutex> g(c.lock);
        if (auto it = c.kept.find(size); it != c.kept.end()) {
            void* p = it->second;
            c.kept.erase(it);
            return p;
        }
    }
    void* p = std::aligned_alloc(kHugePage, size);
    if (!p) throw std::bad_alloc();
    madvise(p, size, MADV_HUGEPAGE);  // a hint: without THP the buffer still works, with 4 KiB pages
    return p;
}

void free_big_buffer(void* p, std::size_t bytes) noexcept {
    BufferCache& c = cache();
    {
        std::lock_guard<std::mutex> g(c.lock);
        if (c.on) {
            try {
                c.kept.emplace(rounded(bytes), p);
                return;
            } catch (...) {  // no room to remember it: free it
            }
        }
    }
    std::free(p);
}

void set_big_buffer_reuse(bool on) {
    BufferCache& c = cache();
    std::lock_guard<std::mutex> g(c.lock);
    c.on = on;
    if (!on) {
        for (auto& [size, p] : c.kept) std::free(p);
        c.kept.clear();
    }
}

Tensor::Tensor(Shape s, float fill) : shape(std::move(s)), data(numel(shape), fill) {}

Tensor Tensor::uninitialized(Shape s) {
    Tensor t;
    t.shape = std::move(s);
    t.data.resize(numel(t.shape));  // default-initialised by the allocator: not zeroed
    return t;
}

std::size_t numel(const Shape& s) {
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    return n;
}

bool checked_numel(const Shape& s, std::size_t limit, std::size_t& out) {
    std::size_t n = 1;
    for (std::size_t d : s) {
        if (d != 0 && n > limit / d) return false;
        n *= d;
    }
    out = n;
    return n <= limit;
}

Tensor transposed(const Tensor& m) {
    const std::size_t r = m.shape.at(0), c = m.shape.at(1);
    // t (c, r)[j][i] = m (r, c)[i][j], in kTile x kTile tiles, each written
    // row by row of t: kTile rows of m are read at once (in L1), and t's writes
    // run along its rows. Row by row of m, each write strided a whole row of t
    // (12 KiB for a 3072-row matrix), a new cache line and often a new page.
    // Measured (a checkpoint's W_1 3072 x 768 and W_2 768 x 3072, as BERT-base
    // converts each block's; one thread, best of 7, 2026-11-25, -O2 and -O3):
    // row by row of m 37 ms; tiles of 16 written along m's rows 15-17 ms; tiles
    // written along t's rows: of 8 2.6-3.8 ms, of 16 3.8-4.4, of 32 6.4-8.0.
    constexpr std::size_t kTile = 8;
    Tensor t = Tensor::uninitialized({c, r});
    const float* src = m.ptr();
    float* dst = t.ptr();
    for (std::size_t i0 = 0; i0 < r; i0 += kTile) {
        const std::size_t i1 = std::min(i0 + kTile, r);
        for (std::size_t j0 = 0; j0 < c; j0 += kTile) {
            const std::size_t j1 = std::min(j0 + kTile, c);
            for (std::size_t j = j0; j < j1; ++j)
                for (std::size_t i = i0; i < i1; ++i) dst[j * r + i] = src[i * c + j];
        }
    }
    return t;
}

std::string shape_str(const Shape& s) {
    if (s.empty()) return "scalar";
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += 'x';
        out += fmt::format("{}", s[i]);
    }
    return out;
}

std::string array_text(const Shape& s) {
    if (s.empty()) return "a single number";
    if (s.size() == 1) return fmt::format("an array of {}", s[0]);
    return fmt::format("a {} array", shape_str(s));
}

Shape squeeze(const Shape& s) {
    Shape out;
    for (std::size_t d : s)
        if (d != 1) out.push_back(d);
    return out;
}

}  // namespace attntrace
