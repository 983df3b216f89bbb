// Run: the state of one pass of a lesson through the pipeline. Stages ask it
// for the values they read, open a step to write their result into, and close
// it; closing applies the lesson's given values and, in document-arithmetic
// mode, the article's rounding, refuses a non-finite value, and under the
// summary policy keeps the summary instead of the values. After each pass the
// block calls end_pass(), which frees what the plan does not keep and nothing
// later reads.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "core/progress.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/plan.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// An input a step needs: its name (a step or "weights.W_Q") and its value, or
// null when it is missing.
using Need = std::pair<std::string, const Tensor*>;

class Run {
public:
    Run(const Lesson& lesson, Arithmetic mode, const Plan& plan);

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
    Trace& trace() { return trace_; }

    // The value flowing downstream from a recorded step; null when it was not
    // computable or not recorded.
    const Tensor* value(const std::string& name) const;
    // A weight of the pass ("W_Q": blocks.1.cross.W_Q in block 1's cross-attention), or null when the lesson has none.
    const Tensor* weight(const std::string& name) const { return lesson_.weight(wname(name)); }
    std::string wname(const std::string& name) const { return pass_->weights + name; }
    std::string wpath(const std::string& name) const { return "weights." + wname(name); }
    // A step of the pass's attention: "hook_q" -> "blocks.1.cross_attn.hook_q".
    std::string attn(const char* leaf) const { return pass_->attn + leaf; }
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

    void warn(std::string message) { trace_.warnings.push_back(std::move(message)); }

    // True when the lesson gives, or (in document arithmetic) rounds, any of
    // these steps: a stage whose kernel fills several steps at once then runs
    // pass by pass, so each pass reads the given or rounded values.
    bool intervenes(std::initializer_list<std::string> steps) const;

    // Frees the buffers the plan does not keep in full whose last reader is pass `index`.
    void end_pass(int index);
    // The trace, without the steps the policy does not keep.
    Trace finish();

private:
    const Lesson& lesson_;
    Arithmetic mode_;
    const Plan& plan_;
    const Catalogue& catalogue_;
    const Pass* pass_;
    Config cross_config_;
    Dims dims_;
    Trace trace_;
    std::vector<Step*> open_;
    // A given score matrix held -inf (an article's blocked cells): the steps
    // computed from it may hold -inf too, where it did.
    bool given_blocked_ = false;

    Step& add_step(const StepDef& def);
    void close_step(Step& s);
    void check_finite(const Step& s);
    void record_given_inputs();
    std::vector<std::string> labels_for(Axis a, const Dims& d, bool cross) const;
};

// Runs the lesson's stages (run.from .. run.to) and returns the trace the
// policy keeps. Refuses (InputError) a run whose plan needs more than
// max_memory_bytes(), before allocating anything. `progress` hears of each
// stage as it starts ("exact run" or "document run", the stage's name).
Trace run_lesson(const Lesson& lesson, Arithmetic mode = Arithmetic::exact, const TracePolicy& policy = {},
                 const ProgressFn& progress = {});
// The same with a plan made (and checked) by the caller.
Trace run_planned(const Lesson& lesson, Arithmetic mode, const Plan& plan, const ProgressFn& progress = {});

}  // namespace attntrace
