// One cell of a recorded step, as an operation explains it (operation.hpp):
// the values the trace recorded for the step's inputs, read by typed handles,
// and the lines of the explanation being written. Each operation recomputes
// the cell in its _ref kernel's order of terms (so the sum shown is the sum
// the pipeline computed, up to the SIMD kernels' rounding); nothing here runs
// a stage.
#pragma once

#include <fmt/format.h>

#include <deque>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

struct ExplainOptions {
    int precision = 4;
    bool full = false;           // every term of a long sum, not the first and last few
    std::size_t max_terms = 16;  // longer sums are elided unless full
};

// The terms of a cell's sum as its explanation writes them, as numbers
// (write_dot): each product a(k)·b(k), k ascending, then the bias when the
// lesson has one. `sum` is their float sum in that order: the cell's value
// (rounded as the document run rounds the step, by recompute()).
struct Terms {
    std::vector<float> values;  // (n) or (n + 1) with a bias
    float sum = 0;
};

struct Cell {
    const Lesson& lesson;
    const Trace& trace;
    const ExplainOptions& opt;
    const Step& step;                    // a computed step of the lesson's catalogue (step.def set)
    const std::vector<std::size_t>& at;  // one index per axis
    std::string out;                     // the explanation so far
    std::optional<Terms> terms;          // set by write_dot: what a claim `of: "terms"` is checked against
    // Quantities inside the formula the explanation works out (a position's angle and frequency), by
    // the names formula_quantities (lesson.hpp) lists: what a claim `of: "angle"` is checked against.
    std::vector<std::pair<std::string, double>> quantities{};
    // The derived steps (trace/derived.hpp) an input() computed, held while the cell is explained.
    mutable std::deque<Step> derived_inputs{};

    std::string num(float x) const;
    // What the step computes, whatever its block and sub-block.
    Leaf leaf() const { return step.def->leaf; }
    // The pass that computed the step: what it was wired to (trace/catalogue.hpp).
    const Pass& pass() const { return lesson.catalogue().pass_of(*step.def); }
    Dims dims() const { return lesson.dims_of(pass()); }
    // The config the step's attention followed (a cross-attention's has no mask, no positions).
    Config attn_config() const { return pass().cross ? cross_attention_config(lesson.config) : lesson.config; }
    // Step `leaf` as the step's pass reads it (its own block and sub-block's,
    // else the embeddings'); InputError when the trace does not hold its values.
    const Step& input(Leaf leaf) const;
    // A step the pass is wired to (pass().x, residual, update).
    const Step& input(StepId id) const;
    // Step `leaf` of the embeddings, or null when the trace holds no values for it.
    const Step* embeddings(Leaf leaf) const;
    // The pass's weights: "W_Q" is blocks.1.cross.W_Q in block 1's cross-attention.
    const Tensor& weight(const std::string& name) const;  // InputError when missing
    const Tensor* optional_weight(const std::string& name) const;
    // Entry (in, out) of weight `name` as the lesson writes it: "W_Q[in,out]",
    // or "W_Q[out,in]" under config.weight_layout "out_in" (nn.Linear's d_out x d_in).
    std::string weight_entry(const std::string& name, std::size_t in, std::size_t out) const;
    std::string weight_entry(const std::string& name, const std::string& in, const std::string& out) const;
    // The label of index i on axis k of step s ("ring", "h0", "d3"), as the
    // lesson or trace wrote it: for matching what a user typed.
    static std::string label_text(const Step& s, std::size_t k, std::size_t i);
    // The same made printable (core/printable.hpp): for an explanation's text,
    // where a token's own controls or line breaks must not reach the terminal.
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
void list_terms(Cell& c, std::size_t n, const std::function<std::string(std::size_t)>& term);

// Σ_k a(k)·b(k) (+ bias) written term by term, summed in float with k
// ascending from 0, as matmul_ref and matmul_nt_ref do; returns the sum and
// records the terms in c.terms.
float write_dot(Cell& c, std::size_t n, const std::function<std::string(std::size_t)>& a_name,
                const std::function<float(std::size_t)>& a, const std::function<std::string(std::size_t)>& b_name,
                const std::function<float(std::size_t)>& b, const char* bias_name = nullptr, const float* bias = nullptr);

// Recomputes c's cell by the operation that computed its step
// (operation.hpp), writing its lines and terms; a step the document run
// rounds (Run::close) is rounded here too, saying so, and so is the terms'
// sum. explain and the terms claims' check (check/claim_terms.hpp) both call it.
float recompute(Cell& c);

// Flat offset of `at` in a tensor of shape `shape`.
std::size_t offset(const Shape& shape, std::initializer_list<std::size_t> at);
inline float get(const Step& s, std::initializer_list<std::size_t> at) { return s.held().data[offset(s.shape, at)]; }

}  // namespace attntrace
