// Derived steps: a step that is a cheap element-wise function of steps the
// trace records (and of per-row values such as a row's max) is kept as that
// function, not as a buffer, and computed when something reads it. A full
// trace of attention then holds the raw scores and the weights, not the
// scaled, masked, shifted and exp'd copies between them (issue: a full trace
// at the price of the arithmetic).
//
// The functions are the operations' own (pipeline/scale.cpp, mask.cpp,
// softmax.cpp build them from the kernels their forward runs), applied row by
// row in the order the run applied them, so a derived step's values are the
// ones the run would have recorded, bit for bit (tests/test_derived_steps.cpp).
//
// Reading: values_of(trace, step) gives any step's values, recorded or
// derived; materialise(trace) turns every derived step of a trace into a
// buffer (a small trace handed to code that reads Step::value, xview.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attntrace {

struct Step;
struct Trace;

// One element-wise operation over rows [r0, r0 + n) of a step's values (a
// row: the step's last axis, `cols` floats; rows count over all leading
// axes), from x's rows to y's, x and y the same or apart, reading the steps
// named in `reads`, in that order.
struct DerivedOp {
    std::vector<std::string> reads;
    std::function<void(std::span<const Tensor* const> reads, const float* x, float* y, std::size_t r0, std::size_t n,
                       std::size_t cols)>
        apply;
};

// A derived step's values: the recorded step `base`'s values with `ops`
// applied in order. A step derived from a derived step extends its chain, so
// the base is always a recorded step and the steps between need not be kept.
struct Derivation {
    std::string base;
    std::vector<DerivedOp> ops;
    // Every step the values are computed from: the base and every op's reads.
    std::vector<std::string> sources() const;
};

// Finds a step by name where the derivation is read (a Trace, or a Run while it records).
using StepFinder = std::function<const Step*(const std::string&)>;

// Rows [r0, r0 + n) of the derived values, written to out (n rows of `cols`
// floats). Throws std::logic_error when a source holds no values (the plan
// derives a step only when all its sources are kept in full). `base_rows`:
// the base's rows r0 .. r0 + n where the caller has them at hand (the fused
// attention's block of raw scores, in cache), else null: read from the base.
void derive_rows(const Derivation& d, const StepFinder& find, float* out, std::size_t r0, std::size_t n,
                 std::size_t cols, const float* base_rows = nullptr);
// All of a derived step's values (shape: the step's), in a new buffer, or
// in `out` (a tensor of the step's shape whose values are overwritten: a run's recycled buffer).
Tensor derive_values(const Step& s, const StepFinder& find);
Tensor derive_values(const Step& s, const StepFinder& find, Tensor out);

// A step's values to read: the buffer it holds, or a derived step's values
// computed now and owned by this handle.
class StepValues {
public:
    explicit StepValues(const Tensor* held) : held_(held) {}
    explicit StepValues(Tensor owned) : owned_(std::make_unique<Tensor>(std::move(owned))), held_(owned_.get()) {}
    const Tensor& operator*() const { return *held_; }
    const Tensor* operator->() const { return held_; }
    const Tensor* get() const { return held_; }
    // The values as a Tensor of one's own: moved out when computed here, else copied.
    Tensor take() { return owned_ ? std::move(*owned_) : *held_; }

private:
    std::unique_ptr<Tensor> owned_;
    const Tensor* held_ = nullptr;
};

// A step's values read a block of rows (of its last axis) at a time, for a
// view that shows a few rows or pools them all: a held step's rows where they
// are, a derived step's computed for those rows only, into a buffer of their
// size. No view then copies a step whole (a derived (12, 8192, 8192) step is
// 3 GiB: `run` of a BERT-size lesson at n = 8192 peaked at 10.3 GB with a
// copy, 7.2 GB without; docs/performance.md).
class StepRows {
public:
    explicit StepRows(const Tensor& held);
    // s's values as values_of gives them, without computing them whole.
    StepRows(const Trace& t, const Step& s);
    const Shape& shape() const { return *shape_; }
    std::size_t rank() const { return shape_->size(); }
    std::size_t size() const { return size_; }
    std::size_t cols() const { return cols_; }  // the last axis's extent (1 for a scalar)
    // Values [first, first + n) in row-major order: in place, or computed
    // (the rows they lie in) into this reader's buffer, valid until the next read.
    const float* span(std::size_t first, std::size_t n);

private:
    const Shape* shape_ = nullptr;
    const float* held_ = nullptr;  // null: derived
    const Trace* trace_ = nullptr;
    const Step* step_ = nullptr;
    std::size_t size_ = 0, cols_ = 1;
    std::vector<float> buffer_;
    std::size_t buffer_r0_ = 0, buffer_rows_ = 0;  // the rows buffer_ holds
};

// Whether s is a derived step kept in full that holds no buffer (its values come from values_of).
bool is_derived(const Step& s);
// s's values: Step::value, or the derived values computed from the trace's steps.
StepValues values_of(const Trace& t, const Step& s);
// The values a claim about s is checked against (Step::checked_value: the
// formula's where a given replaced it), a derived step's computed now; none
// when the trace kept no values of s.
std::optional<StepValues> checked_values(const Trace& t, const Step& s);
// Every derived step of t computed into its Step::value (the derivation stays, for the record).
void materialise(Trace& t);

}  // namespace attntrace
