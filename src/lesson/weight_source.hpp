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
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "core/tensor.hpp"

namespace attntrace {

// The name a decode holds a tied unembedding's W_E transposed under, (C, V)
// (decode/decode.hpp, HeldWeights; read by the unembedding, pipeline/unembed.cpp).
inline constexpr const char* kTiedUnembeddingTransposed = "W_E_transposed";

class WeightSource {
public:
    // `floats`: the float32 values load() returns (its shape's product), for the plan.
    void add(const std::string& name, std::size_t floats, std::function<Tensor()> load);
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

    // The float32 bytes of the largest block's group plus the ungrouped ones: what a run holds at once.
    std::size_t largest_group_bytes() const;
    std::size_t held_bytes() const { return held_bytes_; }
    std::size_t peak_held_bytes() const { return peak_held_bytes_; }  // since the source was made
    std::size_t loads() const { return loads_; }                      // conversions so far

private:
    struct Entry {
        std::size_t floats = 0;
        std::function<Tensor()> load;
    };
    std::map<std::string, Entry> entries_;
    std::map<std::string, Tensor> held_;
    std::size_t held_bytes_ = 0, peak_held_bytes_ = 0, loads_ = 0;
    bool hold_all_ = false;
};

// The group of a weight name: "blocks.3." for "blocks.3.W_Q" and "blocks.3.cross.W_K", else "".
std::string weight_group(const std::string& name);

}  // namespace attntrace
