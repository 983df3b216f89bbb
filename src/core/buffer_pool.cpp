#include "core/buffer_pool.hpp"

#include <algorithm>
#include <utility>

namespace attntrace {

Tensor BufferPool::take(Shape shape) {
    const std::size_t n = numel(shape);
    Tensor t;
    if (auto it = kept_.find(n); it != kept_.end()) {
        t.shape = std::move(shape);
        t.data = std::move(it->second);
        kept_.erase(it);
        kept_bytes_ -= n * sizeof(float);
    } else {
        t = Tensor::uninitialized(std::move(shape));
    }
    out_bytes_ += n * sizeof(float);
    return t;
}

void BufferPool::give(Tensor&& t) {
    FloatBuffer data = std::move(t.data);
    t = Tensor{};
    const std::size_t n = data.size(), bytes = n * sizeof(float);
    out_bytes_ -= std::min(out_bytes_, bytes);
    // only a buffer whose size is its capacity: take() hands out exactly n floats
    if (n == 0 || data.capacity() != n || out_bytes_ + kept_bytes_ + bytes > bound_) return;  // freed here
    kept_.emplace(n, std::move(data));
    kept_bytes_ += bytes;
}

void BufferPool::clear() {
    kept_.clear();
    kept_bytes_ = 0;
}

}  // namespace attntrace
