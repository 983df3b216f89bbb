#include "core/tensor.hpp"

#include <fmt/format.h>

namespace attntrace {

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
