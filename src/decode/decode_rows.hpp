// The decoder's inner loop: one new token through every pass of the lesson's
// model, row by row, with a K/V cache per self-attention (and the memory's
// K and V, projected once, per cross-attention). Internal to src/decode/.
//
// Each pass is interpreted from its wiring (trace/catalogue.hpp): norms, the
// output projection, residual adds and the FFN on the token's row alone with
// the pipeline's kernels; attention by the pipeline's own scores .. mix
// stages for one query over the cache. Every row it computes is compared with
// the same row of the causal run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "decode/decode.hpp"

namespace attntrace::decode_detail {

class RowDecoder {
public:
    RowDecoder(const Lesson& lesson, const Trace& full);
    // Token t through the model; fills the step (block 0's self-attention for
    // display, every deviation) and returns false when a pass cannot run (a
    // weight the lesson does not give): the decode then stops at that pass.
    bool step(std::size_t t, DecodeStep& s);
    // The last step the decode computed, and the cache's floats.
    const std::string& through() const { return through_; }
    std::size_t cache_floats() const;

private:
    struct Cache {
        Tensor k, v;  // (rows, KVH, hs): the self-attention's keys (rotated with RoPE) and values; the memory's in cross
        std::size_t rows = 0;
    };
    const Lesson& lesson_;
    const Trace& full_;
    Dims d_;
    std::map<std::string, Cache> caches_;               // by attention prefix ("blocks.1.attn.")
    std::map<std::string, std::vector<float>> rows_;    // token t's rows, by step name
    std::map<std::string, Tensor> q_;                   // token t's query per attention (NH, hs)
    std::string through_;

    bool qkv(const Pass& p, std::size_t t, DecodeStep& s);
    bool attend(const Pass& p, std::size_t t, DecodeStep& s);
    bool out_proj(const Pass& p, std::size_t t, DecodeStep& s);
    bool residual(const Pass& p, std::size_t t, DecodeStep& s);
    bool norm(const Pass& p, std::size_t t, DecodeStep& s);
    bool ffn(const Pass& p, std::size_t t, DecodeStep& s);
    // Stores row `name` and holds it to row t of the causal run (dev_rows).
    void keep(const std::string& name, std::vector<float> row, std::size_t t, DecodeStep& s);
    const Tensor* weight(const Pass& p, const std::string& name) const { return lesson_.weight(p.weights + name); }
};

}  // namespace attntrace::decode_detail
