// One function per stage, each in the file named after it. Each reads the
// steps it needs from the Run, records its own steps, and leaves the rest to
// the stages after it. Shapes use the letters of trace/steps.hpp. A stage runs
// once per pass (trace/catalogue.hpp): the names it reads and writes, and the
// weights' prefix, come from run.pass(); in a cross-attention pass T is the
// memory's S keys and Tq the decoder's tokens.
#pragma once

#include "pipeline/run.hpp"

namespace attntrace {

void embed_forward(Run& run);      // embed.cpp     X (T, C)
void qkv_forward(Run& run);        // qkv.cpp       Q (Tq, NH, hs), K, V (T, NH, hs)
void rope_forward(Run& run);       // rope.cpp      rotated Q (Tq, NH, hs), K (T, NH, hs); only with RoPE
void scores_forward(Run& run);     // scores.cpp    S (NH, Tq, T)
void scale_forward(Run& run);      // scale.cpp     S/√hs (NH, Tq, T)
void mask_forward(Run& run);       // mask.cpp      M (Tq, T), S̃ + M (NH, Tq, T)
void alibi_forward(Run& run);      // alibi.cpp     slopes (NH), bias (NH, Tq, T); only with ALiBi (called by mask)
// y = (s + bias) + mask   s, bias, y: (NH, plane)   mask: (plane)
void add_alibi_mask(const float* s, const float* bias, const float* mask, float* y, std::size_t NH, std::size_t plane);
void softmax_forward(Run& run);    // softmax.cpp   A (NH, Tq, T) and internals
void mix_forward(Run& run);        // mix.cpp       Z (Tq, NH, hs)
void out_proj_forward(Run& run);   // out_proj.cpp  attn_out (Tq, C)
void add_forward(Run& run);        // residual.cpp  residual + update (T, C)
void norm_forward(Run& run);       // layernorm.cpp LN (T, C)
void ffn_forward(Run& run);        // ffn.cpp       FFN (T, C)
// act(H), or SwiGLU's SiLU(H) ⊙ U   h, u, out: (n); u only with SwiGLU (ffn.cpp; the decoder's rows use it too)
void ffn_activate(const Config& c, const float* h, const float* u, float* out, std::size_t n);

}  // namespace attntrace
