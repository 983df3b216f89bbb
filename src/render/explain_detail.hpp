// Internals of explain.cpp shared by its per-stage files (explain_attn.cpp,
// explain_block.cpp). Internal (installed with the other headers, but not an API
// to build on): include only from render/explain*.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>

#include "render/explain.hpp"

namespace attntrace::explain_detail {

// What one explainer sees: the cell, the trace to read inputs from, the text.
struct Ctx {
    const Lesson& lesson;
    const Trace& trace;
    const ExplainOptions& opt;
    const Step& step;
    const std::vector<std::size_t>& at;
    std::string out;

    std::string num(float x) const;
    // The template name of the step ("blocks.0.attn.hook_q" for blocks.1.cross_attn.hook_q): what it computes.
    const std::string& base() const { return step.def ? step.def->base : step.name; }
    // The pass that computed the step: the names it read (trace/catalogue.hpp).
    const Pass& pass() const { return lesson.catalogue().pass_of(*step.def); }
    // The config the step's attention followed (a cross-attention's has no mask, no positions).
    Config attn_config() const { return pass().cross ? cross_attention_config(lesson.config) : lesson.config; }
    // An input step's values; InputError when the trace does not hold them. A
    // template name ("blocks.0.attn.hook_k") means the step's own block and
    // sub-block's (blocks.1.cross_attn.hook_k).
    const Step& input(std::string_view name) const;
    // An input step by its own name (a name the pass wires: pass().x, a norm's prefix + leaf).
    const Step& step_named(std::string_view name) const;
    // Weights are the pass's: "W_Q" is blocks.1.cross.W_Q in block 1's cross-attention.
    const Tensor& weight(const std::string& name) const;  // InputError when missing
    const Tensor* optional_weight(const std::string& name) const;
    // The label of index i on axis k of step s ("ring", "h0", "d3").
    static std::string label(const Step& s, std::size_t k, std::size_t i);
    template <class... A>
    void line(fmt::format_string<A...> f, A&&... a) {
        out += "  ";
        out += fmt::format(f, std::forward<A>(a)...);
        out += '\n';
    }
};

// Lists term(k) for k in [0, n) one per line, or the first and last three
// with a "..." line between when n exceeds opt.max_terms and not opt.full.
void list_terms(Ctx& c, std::size_t n, const std::function<std::string(std::size_t)>& term);

// Σ_k a(k)·b(k) (+ bias) written term by term, summed in float with k
// ascending from 0, as matmul_ref and matmul_nt_ref do; returns the sum.
float write_dot(Ctx& c, std::size_t n, const std::function<std::string(std::size_t)>& a_name,
                const std::function<float(std::size_t)>& a, const std::function<std::string(std::size_t)>& b_name,
                const std::function<float(std::size_t)>& b, const char* bias_name = nullptr, const float* bias = nullptr);

// Flat offset of `at` in a tensor of shape `shape`.
std::size_t offset(const Shape& shape, std::initializer_list<std::size_t> at);
inline float get(const Step& s, std::initializer_list<std::size_t> at) { return s.value.data[offset(s.shape, at)]; }

// Per-stage explainers: each writes its lines and returns the recomputed value.
float explain_embed(Ctx& c);      // hook_embed, hook_resid_pre
float explain_qkv(Ctx& c);        // hook_q, hook_k, hook_v
float explain_scores(Ctx& c);     // scores_raw, scores_scaled, mask, attn_scores
float explain_softmax(Ctx& c);    // row_max, shifted, exp, row_sum, pattern
float explain_mix(Ctx& c);        // hook_z, hook_attn_out
float explain_residual(Ctx& c);   // resid_mid, resid_post
float explain_layernorm(Ctx& c);  // ln1.*, ln2.*
float explain_ffn(Ctx& c);        // mlp.hook_pre, mlp.hook_pre_linear, mlp.hook_post, hook_mlp_out
float explain_rmsnorm(Ctx& c, const Step& X, const std::string& prefix, const std::string& ln,
                      const std::string& xname);  // ln1.*, ln2.* with config.norm "rmsnorm"
// explain_positions.cpp
float explain_pos_embed(Ctx& c);  // hook_pos_embed
float explain_rope(Ctx& c);       // attn.hook_rot_q, attn.hook_rot_k
float explain_alibi(Ctx& c);      // attn.hook_alibi_slopes, attn.hook_alibi

}  // namespace attntrace::explain_detail
