// Plan: what a run will keep, free and stream, and the memory that needs,
// decided from the lesson and the trace policy before anything is allocated.
//
// Every step is computed into its own buffer (recording never copies). A
// buffer the policy does not keep in full is freed after the last stage that
// reads it. When no step of scores..softmax is kept or given and the mask is
// none, causal or a window, attention streams over key blocks (online
// softmax) and nothing T x T exists; when
// neither FFN hidden step is kept, the FFN runs in row chunks and the T x F
// hidden units never exist whole.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lesson/lesson.hpp"
#include "trace/policy.hpp"

namespace attntrace {

enum class Arithmetic {
    exact,     // the formulas, in float32
    document,  // also round the steps the lesson names, as the article did
};

struct Plan {
    TracePolicy policy;
    const Catalogue* catalogue = nullptr;  // the lesson's
    std::vector<Record> record;   // per catalogue step (lesson.catalogue() order)
    std::vector<int> last_read;   // per catalogue step: the last pass of this run that reads it (-1: none)
    bool stream_attention = false;
    // The standard softmax with nothing of scale..softmax given or rounded:
    // each softmax pass computes its weights from the raw scores row by row
    // (the scale, mask and shift applied on the way), and the scaled, masked,
    // shifted and exp'd scores are derived steps (trace/derived.hpp).
    bool derive_attention = false;
    // derive_attention with the raw scores neither given, rounded nor kept as
    // a summary: each attention whose softmax and mix passes this run runs
    // computes its raw scores, weights and Z row block by row block in the
    // softmax pass (softmax.cpp), so that no (NH, Tq, T) step is read back
    // from memory after it was written. The scores pass opens the raw scores
    // and the mix pass records the Z computed ahead (Run::defer, Run::hold_ahead).
    bool fuse_attention = false;
    // Per catalogue step: a derived step that holds no buffer in this run: not
    // kept, or kept as its derivation because every step it is computed from
    // is kept in full. A derived step kept otherwise (a summary; a full step
    // whose sources are not kept) is computed into a buffer.
    std::vector<bool> derived;
    std::size_t derived_bytes = 0;  // what the derived steps kept would hold as buffers (not in peak or kept)
    bool stream_ffn = false;
    std::size_t ffn_chunk_rows = 0;  // streaming: rows through both layers at a time (ffn_chunk_rows below)
    std::size_t lesson_bytes = 0;  // the lesson's inputs, weights and given values, already in memory; a checkpoint's largest block of weights
    std::size_t view_bytes = 0;    // what `run`'s views of the kept steps hold besides the trace (view_bytes below)
    std::size_t peak_bytes = 0;    // the run's estimated peak: lesson, live step buffers and scratch, or the trace and its views
    // The live step buffers and the stages' scratch beside them (the FFN's
    // chunks, the fused attention's), at the pass where they are most: what
    // the run's BufferPool may hold, out and kept (core/buffer_pool.hpp). The
    // GEMM's packing scratch is each thread's own and not counted here.
    std::size_t step_peak_bytes = 0;
    std::size_t kept_bytes = 0;    // what the trace holds at the end

    Record record_of(const StepDef& def) const;
};

// The views `run` prints after the run (render/text.cpp, matrix.cpp,
// heatmap.cpp, dense_map.cpp) read a step's values a block of rows at a time,
// never the step whole: at most kViewBlockFloats values (a derived step's
// computed into a buffer of that size; 1 MiB, read while in L2), or one row
// when a row is longer.
inline constexpr std::size_t kViewBlockFloats = std::size_t{1} << 18;
// A table's line is held whole before it is written: per value, a number of
// up to 12 characters ("-1.2346e+38"), two spaces before it and room for a
// multi-byte mark ("×").
inline constexpr std::size_t kViewLineBytesPerValue = 16;
// A heatmap's text is held whole, per cell drawn: a cell with 24-bit colour
// escapes is 35 bytes ("\x1b[48;2;245;225;40m\x1b[30m  0.93\x1b[0m") and a space.
inline constexpr std::size_t kViewMapBytesPerCell = 40;
// A heatmap drawn whole (--full) has at most this many columns, pooled down
// to it when wider (render/dense_map.hpp, where the reason is).
inline constexpr std::size_t kViewMaxMapColumns = 512;
// A pooled cell of a heatmap (render/dense_map.hpp: a float and whether the
// mask lets any of its cells through), held for every head before one is drawn.
inline constexpr std::size_t kViewPooledCellBytes = 8;
// What the views of a step of `shape` hold besides the trace: a block of its
// rows per thread, a line of a table, and, for a step drawn as a heatmap,
// every head's pooled cells and the map's text at its largest (--full).
std::size_t view_bytes(const Shape& shape, bool heatmap, int threads);

// True when the lesson gives this step, or (in document arithmetic) rounds it:
// its value is then not the formula's, and a fused kernel may not skip it.
bool intervened(const Lesson& lesson, Arithmetic mode, std::string_view step);

Plan make_plan(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, int threads);

// Refuses (InputError naming the lesson file and "config") a run whose
// estimated peak exceeds `max_bytes`, suggesting a lighter policy when one fits.
void require_memory(const Plan& plan, const Lesson& lesson, Arithmetic mode, int threads, std::size_t max_bytes);

// FLOPs of a stage's matrix products (2 per multiply-add; 0: element-wise
// only; the operation's cost, operation.hpp), and of all the passes a lesson
// runs: how long a run will take, at the GFLOP/s `attntrace bench` measures.
// `d` is the pass's (Lesson::dims_of).
double stage_flops(Stage s, const Dims& d, Activation activation = Activation::relu);
double lesson_flops(const Lesson& lesson);
// The FLOPs of every pass of stage kind `s` the lesson runs (each block's, and a decoder's cross-attention's).
double stage_kind_flops(const Lesson& lesson, Stage s);

// FFN row chunk when streaming: as many rows as keep one buffer of hidden
// units within kFfnChunkFloats (12 MiB: 1024 rows at BERT-base's F = 3072,
// 384 at Llama's 8192; a pass of fewer rows runs them in one chunk). Each chunk packs
// W_1 and W_2 again for the GEMM, so a chunk of 256 rows (3 MiB, the earlier
// constant) repacked them for every 256 rows: a BERT-base block with
// `--trace none`, one thread, FFN stage 30.6 -> 27.9 ms at n = 512 and
// 129-131 -> 114-118 ms at n = 2048 with 1024 rows (docs/performance.md).
// The rows' arithmetic does not depend on the chunk (the GEMM's sums run in
// kc's order, chosen from K alone).
inline constexpr std::size_t kFfnChunkFloats = std::size_t{3} << 20;
inline std::size_t ffn_chunk_rows(std::size_t F) { return std::max<std::size_t>(1, kFfnChunkFloats / std::max<std::size_t>(1, F)); }

}  // namespace attntrace
