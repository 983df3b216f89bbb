// Run: the state of one pass of a lesson through the pipeline. Stages ask it
// for the values they read, open a step to write their result into, and close
// it; closing applies the lesson's given values and, in document-arithmetic
// mode, the article's rounding, refuses a non-finite value, and under the
// summary policy keeps the summary instead of the values. After each pass the
// block calls end_pass(), which frees what the plan does not keep and nothing
// later reads.
#pragma once

#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer_pool.hpp"
#include "core/progress.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "trace/derived.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The rows of every key-axis step (K, V, RoPE's rotated K: first axis `key`)
// a decode has computed so far, per catalogue step: what a KV cache holds.
// A decode step writes its new rows in place: the window's run borrows each
// step's rows as its buffer (lend: grown by the new rows, the cached ones
// neither copied nor moved), and the caller gives the buffer back with them
// once it has read the window's trace (reclaim). Growing reserves room
// geometrically, so appending a token copies the rows only when the
// capacity doubles, not at every token.
class KeyCache {
public:
    std::size_t rows(std::size_t step) const;
    std::size_t floats(std::size_t step) const;
    // Step `step`'s buffer, shape `shape` (its first axis the rows so far plus
    // the new ones): its first rows(step) rows are the cache's. Refuses
    // (std::logic_error) a step whose buffer is lent and not yet given back.
    Tensor lend(std::size_t step, const Shape& shape);
    // Every key-axis step of `window` (a run_window trace over this cache)
    // gives its buffer back: its rows are the cache's from now on, and the
    // step holds no values any more. Call it once done with the window's
    // keys and values, before the next window.
    void reclaim(Trace& window, const Catalogue& catalogue);

private:
    struct Rows {
        Tensor data;
        std::size_t rows = 0;
        bool lent = false;
    };
    std::map<std::size_t, Rows> steps_;
};

// The rows a run computes. A lesson's run computes them all (no cache). A
// decode step computes the new rows [pos0, pos0 + rows) of the residual stream
// (their queries at those positions): every stage runs as in the whole run,
// over those rows, and each attention's key-axis steps take their earlier rows
// from the cache and compute only the new ones, which the run then appends.
// A cross-attention's keys (the memory's) are computed at the first step and
// then come from the cache whole.
struct RowWindow {
    std::size_t pos0 = 0;
    std::size_t rows = 0;
    KeyCache* cache = nullptr;  // null: the whole sequence
};

// An input a step needs: its name (a step or "weights.W_Q") and its value (a
// tensor, or a weight matrix as the products read it: Run::matrix), or null
// when it is missing.
struct Need {
    Need(std::string n, const Tensor* t) : name(std::move(n)), ptr(t) {}
    Need(std::string n, const StoredMatrix* m) : name(std::move(n)), ptr(m) {}
    std::string name;
    const void* ptr;
};

class Run {
public:
    Run(const Lesson& lesson, Arithmetic mode, const Plan& plan, RowWindow window = {});
    // Not copied: a copy's step pointers and finder would alias this run's steps.
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    const Lesson& lesson() const { return lesson_; }
    const Plan& plan() const { return plan_; }
    // The pass running now (catalogue.hpp), and its extents.
    const Pass& pass() const { return *pass_; }
    const Dims& dims() const { return dims_; }
    // The config the pass's attention follows: the lesson's, except that a
    // cross-attention pass has no mask and no positions (every decoder token
    // sees every memory token).
    const Config& config() const { return pass_->cross ? cross_config_ : lesson_.config; }
    void begin_pass(int index);
    // The trace being written: its steps arrive at finish() (until then they are the Run's).
    Trace& trace() { return trace_; }
    // A step recorded so far by this run, or null.
    Step* recorded(const std::string& name);
    const RowWindow& window() const { return window_; }
    // The extents of pass `p` in this run (the window's rows in a decode step).
    Dims dims_of(const Pass& p) const;
    // Rows of key-axis step `name` the cache already holds: a stage computes
    // rows [cached_rows, T) of it (all of them in a lesson's run).
    std::size_t cached_rows(const std::string& name) const;
    // Records a step the run starts from (a decode step's row of X) as given.
    void seed(const std::string& name, Tensor value, std::string note);

    // The value flowing downstream from a recorded step; null when it was not
    // computable or not recorded.
    const Tensor* value(const std::string& name) const;
    // A weight of the pass ("W_Q": blocks.1.cross.W_Q in block 1's cross-attention), or null when the lesson has none.
    const Tensor* weight(const std::string& name) const { return lesson_.weight(wname(name)); }
    // A weight matrix of the pass as the products read it (linear_stored): in
    // place as the checkpoint stores it when the lesson's source has it so
    // (WeightSource::stored: no float32 copy), else the float32 tensor's;
    // null when the lesson has none.
    const StoredMatrix* matrix(const std::string& name);
    // linear_stored's verdict on matrix(name): when not finite, the weight is
    // refused as its conversion would refuse it (naming the value) if a value
    // of it is not finite (WeightSource::refuse_if_not_finite).
    void require_finite(const std::string& name, bool finite) const;
    std::string wname(const std::string& name) const { return pass_->weights + name; }
    std::string wpath(const std::string& name) const { return "weights." + wname(name); }
    // Step `leaf` as this pass reads or writes it: Leaf::q -> "blocks.1.cross_attn.hook_q"
    // in block 1's cross-attention, Leaf::ln_mean -> "blocks.0.ln2.hook_mean" in norm pass ln2.
    const std::string& name(Leaf leaf) const { return catalogue_.step(*pass_, leaf).name; }
    // A step the pass is wired to (pass().x, residual, update, out).
    const std::string& name(StepId id) const { return catalogue_.at(id).name; }
    // One of the lesson's inputs ("X", "memory"), or null.
    const Tensor* input(const std::string& name) const {
        auto it = lesson_.inputs.find(name);
        return it == lesson_.inputs.end() ? nullptr : &it->second;
    }

    // Opens step `name`. Returns the buffer for the formula's result, or null
    // when an input in `needs` is missing (the step is then recorded as given,
    // or as not computable with the reason). `optional` inputs (biases) are
    // listed as inputs when present and never make the step not computable.
    // A stage whose kernel fills several steps at once (softmax, LayerNorm)
    // opens them all before it runs the kernel (see intervenes()).
    float* open(const std::string& name, std::initializer_list<Need> needs,
                std::initializer_list<Need> optional = {});
    // Closes every open step: given values replace the formula's, the
    // document rounding is applied.
    void close();

    // Records step `name` as derived (trace/derived.hpp, under
    // plan().derive_attention): step `from`'s values with `op` applied. It
    // stays a derivation when the plan gives it no buffer; otherwise (a
    // summary, or sources not kept) it is opened, and its values are computed
    // when close() closes it, after the steps opened before it. Not
    // computable when `from` or a step `op` reads is not.
    void derive(const std::string& name, const std::string& from, DerivedOp op);
    // How to compute step `name`'s values from the steps that hold buffers:
    // its derivation, or itself when it holds its values.
    Derivation derivation_of(const std::string& name) const;
    // Finds this run's recorded steps, for derive_rows.
    StepFinder finder() const;
    // A derived step's values computed and checked finite as close() checks a
    // step: the refusal of an overflow names the step where it happened.
    void check_derived(const std::string& name);
    // Step `name`'s computed values are finite by construction, as the stage
    // has just made sure (the weights: every row's max finite or -inf, so
    // each weight is exp(≤ 0) / (a sum ≥ 1), or a blocked row's 0): close()
    // does not scan them again. Given values are scanned as always.
    void finite_by_construction(const std::string& name) { finite_by_construction_.insert(name); }
    // Step `name`'s computed values are at most `bound` in magnitude, rounding
    // included, as the stage worked out from its inputs (the raw scores:
    // hs · max|Q| · max|K| · a slack): within float32's range they are finite
    // by construction. A bound past the range, or NaN, changes nothing.
    void finite_by_bound(const std::string& name, double bound);
    bool is_finite_by_construction(const std::string& name) const { return finite_by_construction_.count(name) > 0; }
    // plan().fuse_attention for the attention of the pass running now: its
    // scores, softmax and mix passes all run in this run, and this is no
    // decode window (a window's keys come partly from the cache).
    bool fuses_attention() const;
    // Step `name`, opened and closed, is filled by a later pass (the raw
    // scores, by the fused softmax pass): close() had nothing to check, the
    // step being finite by its bound (finite_by_bound), and nothing reads it
    // before filled(name). finish() refuses a step never filled.
    // The step is pending (Step::pending) until then: reading it is refused.
    void defer(const std::string& name);
    bool deferred(const std::string& name) const;
    // Step `name` is filled: derived steps with a buffer that waited for it
    // (close_step) are computed and closed now.
    void filled(const std::string& name);
    // Step `name`'s formula values, computed ahead of its own pass (Z, by the
    // fused softmax pass); its pass records them with open_with().
    void hold_ahead(const std::string& name, Tensor values) { ahead_[name] = std::move(values); }
    std::optional<Tensor> take_ahead(const std::string& name);
    // open() with the step's computed values given: they become its buffer.
    // False when an input in `needs` is missing (as open()'s null).
    bool open_with(const std::string& name, std::initializer_list<Need> needs, Tensor values);
    // Whether step `name` was recorded and is computable (a buffer or a derivation).
    bool computable(const std::string& name) const;

    void warn(std::string message) { trace_.warnings.push_back(std::move(message)); }
    // Recorded step `name`'s formula, and its meaning when not empty, as its
    // operation computes it under this config (where the step table's differs).
    void set_formula(const std::string& name, std::string formula, std::string meaning = {});

    // True when the lesson gives, or (in document arithmetic) rounds, any of
    // these steps: a stage whose kernel fills several steps at once then runs
    // pass by pass, so each pass reads the given or rounded values.
    bool intervenes(std::initializer_list<std::string> steps) const;

    // A stage's scratch of `shape` beside its steps (the FFN's hidden chunk,
    // Z computed ahead), elements unset, from the run's buffers (pool()):
    // give it back with recycle() when done, or record it (open_with).
    Tensor scratch(Shape shape) { return pool_.take(std::move(shape)); }
    void recycle(Tensor&& t) { pool_.give(std::move(t)); }
    // The buffers freed so far, kept for the next steps of their sizes (a
    // step's buffer comes from it, and end_pass gives it back), within the
    // plan's step_peak_bytes; emptied when the run leaves the blocks (the
    // unembedding's buffers are of other sizes) and at finish().
    const BufferPool& pool() const { return pool_; }

    // Gives back to pool() the buffers the plan does not keep in full whose last reader is pass `index`.
    void end_pass(int index);
    // The trace, without the steps the policy does not keep.
    Trace finish();

private:
    std::map<std::string, StoredMatrix> matrices_;  // matrix()'s views of float32 tensors
    const Lesson& lesson_;
    Arithmetic mode_;
    const Plan& plan_;
    RowWindow window_;
    const Catalogue& catalogue_;
    const Pass* pass_;
    Config cross_config_;
    Dims dims_;
    Trace trace_;  // everything but the steps, until finish()
    BufferPool pool_;
    // The steps, in the order recorded: a deque, so a step (and the Tensor a
    // stage holds a pointer to) stays where it is while later ones are added.
    std::deque<Step> steps_;
    std::vector<Step*> by_index_;  // per catalogue step: its recorded step, or null
    std::vector<Step*> open_;
    // A given score matrix held -inf (an article's blocked cells): the steps
    // computed from it may hold -inf too, where it did.
    bool given_blocked_ = false;
    std::set<std::string> finite_by_construction_;  // finite_by_construction()
    std::vector<Step*> waiting_;  // derived steps with a buffer whose sources are pending (close_step)
    std::map<std::string, Tensor> ahead_;           // hold_ahead()

    Step& add_step(const StepDef& def);
    void close_step(Step& s);
    // The lesson's (or an intervention's) values replace the formula's in the cells they mark.
    void apply_given(Step& s, const Given& g);
    bool waits_for_sources(const Step& s) const;
    void check_finite(const Step& s);
    void record_given_inputs();
    // The lesson's given value of step s, cut to this run's window (whole in a lesson's run).
    Tensor given_value(const Step& s, const Tensor& given) const;
};

// The part of a whole-sequence step that a window's step of shape `shape`
// covers: positions pos0.. on pos and query axes, the first keys on key
// axes, everything on the others. Given values are cut to a window with it,
// and decode compares its steps with the whole run's through it.
Tensor window_slice(const Tensor& full, const Shape& shape, const std::vector<std::string>& axes, std::size_t pos0);

// Runs the lesson's stages (run.from .. run.to) and returns the trace the
// policy keeps. Refuses (InputError) a run whose plan needs more than
// max_memory_bytes(), before allocating anything. `progress` hears of each
// stage as it starts ("exact run" or "document run", the stage's name).
Trace run_lesson(const Lesson& lesson, Arithmetic mode = Arithmetic::exact, const TracePolicy& policy = {},
                 const ProgressFn& progress = {});
// The same with a plan made (and checked) by the caller.
Trace run_planned(const Lesson& lesson, Arithmetic mode, const Plan& plan, const ProgressFn& progress = {});
// One decode step: the lesson's passes after the embeddings, exactly, over the
// window's rows, starting from `x`, the window's rows of blocks.0.hook_resid_pre.
// `plan` keeps every step (make_plan with the full policy).
Trace run_window(const Lesson& lesson, const Plan& plan, RowWindow window, Tensor x);
// The embeddings' pass alone (pass 0) over the whole sequence: its trace holds
// blocks.0.hook_resid_pre (T, C), whose last row a generated token's window starts from.
Trace run_embeddings(const Lesson& lesson, const Plan& plan);

}  // namespace attntrace
