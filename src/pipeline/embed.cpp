// Stage embed: the input matrix X, given inline or looked up in an embedding table.
#include <algorithm>

#include "pipeline/stages.hpp"

namespace attntrace {

void embed_forward(Run& run) {
    const Lesson& lesson = run.lesson();
    const Dims& d = run.dims();
    const char* x_name = "blocks.0.hook_resid_pre";
    if (auto it = lesson.inputs.find("embedding"); it != lesson.inputs.end()) {
        // E[t] = W_E[token_id(t)]   table: (vocab, C)   E: (T, C)
        const Tensor& table = it->second;
        if (float* e = run.open("hook_embed", {{"inputs.embedding", &table}})) {
            for (std::size_t t = 0; t < d.T; ++t) {
                const float* row = table.ptr() + static_cast<std::size_t>(lesson.token_ids[t]) * d.C;
                std::copy(row, row + d.C, e + t * d.C);
            }
        }
        run.close();
        const Tensor* E = run.value("hook_embed");
        // X = E (no positional encoding in this block)
        if (float* x = run.open(x_name, {{"hook_embed", E}})) std::copy(E->data.begin(), E->data.end(), x);
        run.close();
        return;
    }
    auto it = lesson.inputs.find("X");
    const Tensor* X = it == lesson.inputs.end() ? nullptr : &it->second;
    // X as the lesson gives it: (T, C)
    if (float* x = run.open(x_name, {{"inputs.X", X}})) std::copy(X->data.begin(), X->data.end(), x);
    run.close();
}

}  // namespace attntrace
