// Operation embed: the input matrix X, given inline or looked up in an embedding
// table, plus the positional encodings when the lesson has additive ones
// (config.positions "sinusoidal" or "learned"), plus BERT's token type
// (segment) embeddings when it has a table of them (inputs.token_types).
#include <algorithm>
#include <cmath>

#include "kernels/kernels.hpp"
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
        if (float* pe = run.open(run.name(Leaf::pos_embed), {}))
            sinusoidal_table(pe, d.T, d.C, lesson.config.positions.layout == RopeLayout::interleaved);
    } else {
        auto it = lesson.inputs.find("positions");
        const Tensor* table = it == lesson.inputs.end() ? nullptr : &it->second;
        if (float* pe = run.open(run.name(Leaf::pos_embed), {{"inputs.positions", table}}))
            std::copy(table->ptr(), table->ptr() + d.T * d.C, pe);
    }
    run.close();
}

// hook_pos_embed at (p, d)
float pos_embed_explain(Cell& c) {
    const std::size_t p = c.at[0], d = c.at[1], C = c.dims().C;
    const std::string tok = Cell::label(c.step, 0, p);
    if (c.lesson.config.positions.kind == PositionKind::learned) {
        const Tensor& table = c.lesson.inputs.at("positions");
        c.line("learned: token {} sits at position {}: row {} of the lesson's inputs.positions, column {}", tok, p, p, d);
        return table.data[p * table.shape[1] + d];
    }
    const bool interleaved = c.lesson.config.positions.layout == RopeLayout::interleaved;
    const std::size_t i = sinusoidal_pair(d, C, interleaved), two_i = 2 * i;
    const bool sin = sinusoidal_is_sin(d, C, interleaved);
    const double angle = sinusoidal_angle(p, d, C, interleaved);
    if (interleaved)
        c.line("sinusoidal, interleaved as the paper: dimension d{} = {} holds the {} of the angle of pair i = {}", d,
               sin ? "2i" : "2i+1", sin ? "sin" : "cos", i);
    else
        c.line("sinusoidal in halves: dimension d{} = {} holds the {} of the angle of pair i = {}", d, sin ? "i" : "C/2 + i",
               sin ? "sin" : "cos", i);
    c.line("angle = p / 10000^(2i/C) = {} / 10000^({}/{}) = {} / {} = {:.9g} rad   (in double)", p, two_i, C, p,
           fmt::format("{:.9g}", std::pow(10000.0, double(two_i) / double(C))), angle);
    const float r = sinusoidal_value(p, d, C, interleaved);
    c.line("{}({:.9g}) = {}   (rounded to float32)", sin ? "sin" : "cos", angle, c.num(r));
    c.quantities = {{"angle", angle}, {"frequency", sinusoidal_angle(1, d, C, interleaved)}};  // ω_i: the angle at p = 1
    return r;
}

// TT: (T, C), row 0 of the lesson's token type table (R, C) for every token:
// one sentence, token_type_ids all 0, as BertModel defaults them.
void token_type_embed(Run& run) {
    const Dims& d = run.dims();
    const Tensor* table = &run.lesson().inputs.at("token_types");
    if (float* tt = run.open(run.name(Leaf::token_type_embed), {{"inputs.token_types", table}}))
        for (std::size_t t = 0; t < d.T; ++t) std::copy(table->ptr(), table->ptr() + d.C, tt + t * d.C);
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
    const bool add_types = lesson.inputs.count("token_types") > 0;
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
    } else if (add_positions || add_types) {
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
    if (add_types) {
        // X = (E + TT) + PE, in BertEmbeddings' order   (T, C)
        token_type_embed(run);
        const std::string& tt_name = run.name(Leaf::token_type_embed);
        const Tensor* TT = run.value(tt_name);
        const Tensor* P = nullptr;
        if (add_positions) {
            pos_embed(run);
            P = run.value(pe_name);
        }
        float* x = add_positions ? run.open(x_name, {{e_name, E}, {tt_name, TT}, {pe_name, P}})
                                 : run.open(x_name, {{e_name, E}, {tt_name, TT}});
        if (x) {
            add(E->ptr(), TT->ptr(), x, d.T * d.C);
            if (P) add(x, P->ptr(), x, d.T * d.C);
        }
        run.close();
        run.set_formula(x_name, add_positions ? "X = (E + TT) + PE, one row per token" : "X = E + TT, one row per token");
        return;
    }
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
        add(E->ptr(), P->ptr(), x, d.T * d.C);
    run.close();
}

// hook_embed, hook_pos_embed, hook_resid_pre at (t, c)
float embed_explain(Cell& c) {
    const std::size_t t = c.at[0], col = c.at[1];
    const std::string tok = Cell::label(c.step, 0, t);
    if (c.leaf() == Leaf::pos_embed) return pos_embed_explain(c);
    if (c.leaf() == Leaf::token_type_embed) {
        const Tensor& table = c.lesson.inputs.at("token_types");
        c.line("token {} is of type 0 (one sentence): row 0 of the lesson's inputs.token_types, column {}", tok, col);
        return table.data[col];
    }
    if (c.leaf() == Leaf::resid_pre && c.lesson.inputs.count("token_types")) {
        const Step &E = c.input(Leaf::embed), &TT = c.input(Leaf::token_type_embed);
        const float e = get(E, {t, col}), tt = get(TT, {t, col});
        c.line("X = (E + TT){}: {}[{},d{}] + {}[{},d{}] = {} + {}", c.lesson.config.positions.additive() ? " + PE" : "",
               E.name, tok, col, TT.name, tok, col, c.num(e), c.num(tt));
        float r = e + tt;
        c.line("  = {}", c.num(r));
        if (c.lesson.config.positions.additive()) {
            const Step& PE = c.input(Leaf::pos_embed);
            const float p = get(PE, {t, col});
            c.line("  + {}[{},d{}] = {} + {}", PE.name, tok, col, c.num(r), c.num(p));
            r += p;
            c.line("  = {}", c.num(r));
        }
        return r;
    }
    if (c.leaf() == Leaf::embed && !c.lesson.inputs.count("embedding")) {
        const Tensor& X = c.lesson.inputs.at("X");
        c.line("the lesson's inputs.X, row {} (token {}), column {}: the token embeddings, before positions", t, tok, col);
        return X.data[t * X.shape[1] + col];
    }
    if (c.leaf() == Leaf::embed) {
        const Tensor& table = c.lesson.inputs.at("embedding");
        const auto id = static_cast<std::size_t>(c.lesson.token_ids[t]);
        c.line("token {} has id {}: row {} of the lesson's embedding table, column {}", tok, id, id, col);
        return table.data[id * table.shape[1] + col];
    }
    if (c.lesson.config.positions.additive()) {
        const Step &E = c.input(Leaf::embed), &PE = c.input(Leaf::pos_embed);
        const float e = get(E, {t, col}), p = get(PE, {t, col});
        c.line("X = E + PE: {}[{},d{}] + {}[{},d{}] = {} + {}", E.name, tok, col, PE.name, tok, col, c.num(e), c.num(p));
        const float r = e + p;
        c.line("  = {}", c.num(r));
        return r;
    }
    if (const Step* e = c.embeddings(Leaf::embed)) {
        c.line("X = the embeddings (no positional encoding in this block): {}[{},d{}]", e->name, tok, col);
        return get(*e, {t, col});
    }
    const Tensor& X = c.lesson.inputs.at("X");
    c.line("an input: the lesson's inputs.X, row {} (token {}), column {}", t, tok, col);
    return X.data[t * X.shape[1] + col];
}

}  // namespace attntrace
