// Weights a lesson does not hold yet: a checkpoint's tensors, converted to
// float32 when a pass first asks for them and released when the run moves on
// to another block, so that a model's peak memory is one block's float32
// weights (plus what the lesson holds and what the trace keeps), not all of them.
//
// Each entry is a lesson weight's name ("blocks.3.W_Q"), its float32 size and
// how to make it (read the tensor from the mapped file, convert, transpose).
// Lesson::weight asks the lesson's own table first, then its source. A
// weight's group is its block ("blocks.3."; "" for a one-block model):
// Run::begin_pass keeps the pass's group and releases the other blocks', so
// a block's weights are held from its first pass to the next block's first
// (the passes outside the blocks, the final norm and the unembedding, release
// them all); Run::finish releases all. A weight asked for again (explain) is
// converted again, unless hold_all keeps every weight (a decode's tokens). Not thread-safe: the stages ask for their
// weights before their parallel loops, on the run's thread.
// A matrix may also be given as stored (StoredWeight: float32, bfloat16 or
// half): the products then read it in place (stored(), linear_stored) with
// no float32 copy, its mapped pages held and released with its group as a
// converted weight is.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/tensor.hpp"
#include "kernels/matmul.hpp"  // StoredMatrix

namespace attntrace {

// The name a decode holds a tied unembedding's W_E transposed under, (C, V)
// (decode/decode.hpp, HeldWeights; read by the unembedding, pipeline/unembed.cpp).
inline constexpr const char* kTiedUnembeddingTransposed = "W_E_transposed";

// A weight a product may read in place, as the checkpoint stores it
// (kernels/matmul.hpp's StoredMatrix, widened as the GEMM packs it): `bytes`
// of the mapped file; `check` refuses it as its conversion would (naming the
// first value that is not finite), run when the product that read it found
// such a value (linear_stored checks each 16-bit value as it packs it, and
// a float32 product's output: a weight not finite makes its column's sum so); `release`
// drops its mapped pages from the resident set once its block is done.
struct StoredWeight {
    StoredMatrix matrix;
    std::size_t bytes = 0;
    std::function<void()> check, release;
};

class WeightSource {
public:
    // `floats`: the float32 values load() returns (its shape's product), for the plan.
    void add(const std::string& name, std::size_t floats, std::function<Tensor()> load);
    // The same, for a weight that may also be read in place (stored()).
    void add(const std::string& name, std::size_t floats, std::function<Tensor()> load, StoredWeight stored);
    // The weight as stored, for a product that reads it in place
    // (linear_stored): no float32 copy is made. Null when the source has no
    // such weight stored, read_in_place is off, or it is held converted
    // (get() first, or hold_all of a 16-bit or transposed matrix: a decode's
    // GEMV reads float32, and a (K, N) one at twice the rate of (N, K)).
    // Its pages count as held, in the stored bytes, until its group is
    // released as get()'s weights are.
    const StoredMatrix* stored(const std::string& name);
    // Whether stored() gives weights in place (on by default); off, every
    // weight is converted as get() converts it (tests compare the two).
    void read_in_place(bool on) { in_place_on_ = on; }
    // A product of stored weight `name` found a value not finite (linear_stored):
    // refused as its conversion refuses it when a value of the weight is not
    // finite. Else returns for a float32 weight (its product's own inputs or
    // sums were not finite: the run's checks report them), and is a logic
    // error for a 16-bit one (its packing found the value).
    void refuse_if_not_finite(const std::string& name) const;
    bool provides(const std::string& name) const { return entries_.count(name) != 0; }
    // The weight, converted now if not held; null when the source has no such weight.
    const Tensor* get(const std::string& name);
    // Releases every held weight outside `prefix`'s group ("blocks.3." or
    // "blocks.3.cross." keeps blocks.3.*); "" (a pass that reads no block's
    // weights: the embedding, a residual add) releases nothing.
    void keep_group(const std::string& prefix);
    // Releases every block's weights, keeping the model's own (W_U): for the passes after the last block.
    void release_blocks();
    void release_all();
    // While on, nothing is released (keep_group, release_blocks and
    // release_all do nothing): every weight is converted once and kept, for
    // a decode whose every token runs every block (decode/decode.hpp,
    // HeldWeights). Off again releases everything.
    void hold_all(bool on);
    bool holds_all() const { return hold_all_; }
    // The float32 bytes of every weight: what hold_all holds at most.
    std::size_t total_bytes() const;
    // While hold_all is on: `value` held under `name` (a weight in another
    // layout, made once for a decode's tokens: the tied embedding transposed),
    // get(name) gives it, and hold_all(false) releases it with the rest.
    void put(const std::string& name, Tensor value);

    // The bytes of the largest block's group plus the ungrouped ones: what a run holds at once
    // (a weight read in place counted in its stored bytes).
    std::size_t largest_group_bytes() const;
    std::size_t held_bytes() const { return held_bytes_; }
    std::size_t peak_held_bytes() const { return peak_held_bytes_; }  // since the source was made
    std::size_t loads() const { return loads_; }                      // conversions so far

private:
    struct Entry {
        std::size_t floats = 0;
        std::function<Tensor()> load;
        std::optional<StoredWeight> stored;
    };
    // What the run holds of an entry at once: its float32 values, or its stored bytes when read in place.
    static std::size_t held_size(const Entry& e);
    void release_stored(const std::function<bool(const std::string&)>& which);
    std::map<std::string, Entry> entries_;
    std::map<std::string, Tensor> held_;
    std::map<std::string, std::size_t> in_place_;  // stored weights read in place, with their bytes
    std::size_t held_bytes_ = 0, peak_held_bytes_ = 0, loads_ = 0;
    bool hold_all_ = false, in_place_on_ = true;
};

// The group of a weight name: "blocks.3." for "blocks.3.W_Q" and "blocks.3.cross.W_K", else "".
std::string weight_group(const std::string& name);

}  // namespace attntrace
