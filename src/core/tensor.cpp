#include "core/tensor.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

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
    Tensor t(Shape{c, r});
    for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < c; ++j) t.data[j * r + i] = m.data[i * c + j];
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
