// Stage embed: the input matrix X, given inline or looked up in an embedding
// table, plus the positional encodings when the lesson has additive ones
// (config.positions "sinusoidal" or "learned").
#include <algorithm>

#include "kernels/positions.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// PE: (T, C). Sinusoidal: interleaved sin/cos of p / 10000^(2i/C); learned:
// rows 0..T-1 of the lesson's table (P, C).
void pos_embed(Run& run) {
    const Lesson& lesson = run.lesson();
    const Dims& d = run.dims();
    if (lesson.config.positions.kind == PositionKind::sinusoidal) {
        if (float* pe = run.open(run.name(Leaf::pos_embed), {})) sinusoidal_table(pe, d.T, d.C);
    } else {
        auto it = lesson.inputs.find("positions");
        const Tensor* table = it == lesson.inputs.end() ? nullptr : &it->second;
        if (float* pe = run.open(run.name(Leaf::pos_embed), {{"inputs.positions", table}}))
            std::copy(table->ptr(), table->ptr() + d.T * d.C, pe);
    }
    run.close();
}

}  // namespace

void embed_forward(Run& run) {
    const Lesson& lesson = run.lesson();
    const Dims& d = run.dims();
    const std::string& x_name = run.name(Leaf::resid_pre);
    const std::string& e_name = run.name(Leaf::embed);
    const std::string& pe_name = run.name(Leaf::pos_embed);
    const bool add_positions = lesson.config.positions.additive();
    auto it = lesson.inputs.find("X");
    const Tensor* X = it == lesson.inputs.end() ? nullptr : &it->second;
    if (auto e = lesson.inputs.find("embedding"); e != lesson.inputs.end()) {
        // E[t] = W_E[token_id(t)]   table: (vocab, C)   E: (T, C)
        const Tensor& table = e->second;
        if (float* out = run.open(e_name, {{"inputs.embedding", &table}})) {
            for (std::size_t t = 0; t < d.T; ++t) {
                const float* row = table.ptr() + static_cast<std::size_t>(lesson.token_ids[t]) * d.C;
                std::copy(row, row + d.C, out + t * d.C);
            }
        }
        run.close();
    } else if (add_positions) {
        // The lesson's X are the token embeddings, before positions are added: (T, C)
        if (float* out = run.open(e_name, {{"inputs.X", X}})) std::copy(X->data.begin(), X->data.end(), out);
        run.close();
    } else {
        // X as the lesson gives it, no positions: (T, C)
        if (float* x = run.open(x_name, {{"inputs.X", X}})) std::copy(X->data.begin(), X->data.end(), x);
        run.close();
        return;
    }
    const Tensor* E = run.value(e_name);
    if (!add_positions) {
        // X = E (no positional encoding in this block)
        if (float* x = run.open(x_name, {{e_name, E}})) std::copy(E->data.begin(), E->data.end(), x);
        run.close();
        return;
    }
    pos_embed(run);
    const Tensor* P = run.value(pe_name);
    // X = E + PE   (T, C)
    if (float* x = run.open(x_name, {{e_name, E}, {pe_name, P}}))
        for (std::size_t i = 0; i < d.T * d.C; ++i) x[i] = E->data[i] + P->data[i];
    run.close();
}

}  // namespace attntrace
