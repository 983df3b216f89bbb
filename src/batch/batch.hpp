// Batches: B sequences run through attention together, as article 001 shapes
// them (X [B, T, D], scores [B, H, T, T]). Sequences never see each other, so
// a batch is B one-sequence runs: sequence b is padded on the right to T with
// the pad token and masked with its own key padding mask (PyTorch's
// key_padding_mask, combined with config.mask "causal" when it is set), run by
// the ordinary pipeline (run_planned), and the B traces are stacked step by
// step along a new leading axis `batch`.
//
// Shapes (attntrace's axis order, TransformerLens'; 001's in brackets):
//   X        (B, T, C)        [B, T, D]
//   Q, K, V  (B, T, NH, hs)   [B, H, T, D_h]: the same numbers, heads and tokens swapped
//   scores   (B, NH, T, T)    [B, H, T, T]
//   Z        (B, T, NH, hs)   [B, H, T, D_h]
//   out      (B, T, C)        [B, T, D]
//
// Queries at pad positions still compute (PyTorch does): their rows are the
// attention of a pad token over the real keys, and a model ignores them later.
#pragma once

#include <cstddef>
#include <vector>

#include "core/progress.hpp"
#include "lesson/lesson.hpp"
#include <optional>

#include "pipeline/plan.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// Sequence b of a batched lesson as a plain lesson: its tokens (ids, X rows)
// padded to T with the pad token (pad_id, pad_x), config.mask the padding
// mask of positions L_b..T-1 (causal when config.mask is), no claims (they
// are about the stacked trace).
Lesson sequence_lesson(const Lesson& batched, std::size_t b);

// Runs each sequence with the pipeline and stacks their traces. Refuses
// (InputError naming the lesson and "batch") a batch whose traces would
// exceed max_memory_bytes(). `progress` hears "sequence b/B: exact run".
Trace run_batch(const Lesson& batched, Arithmetic mode, const TracePolicy& policy = {},
                const ProgressFn& progress = {});

// B traces of the same steps (in the same order) as one: every step gains the
// leading axis `batch` (labels b0..b{B-1}); token axes are labelled p0..p{T-1}.
Trace stack_traces(const std::vector<Trace>& traces, const std::vector<std::vector<std::string>>& tokens);

// Sequence b of a stacked trace, as its own one-sequence trace with its tokens
// as labels (explain and the text view read it).
Trace unstack_trace(const Trace& batched, std::size_t b);

// A cell of a batched trace within its sequence: sequences never see each
// other, so the cell is recomputed (explain, a terms claim) from sequence b's
// own lesson, trace, tokens and padding mask, at its indices without b.
struct SequenceCell {
    std::size_t b = 0;
    Lesson lesson;
    Trace trace;
    std::vector<std::size_t> at;
};
// nullopt when `step` is not a batched trace's (its first axis is not `batch`).
std::optional<SequenceCell> sequence_cell(const Lesson& lesson, const Trace& trace, const Step& step,
                                          const std::vector<std::size_t>& at);

}  // namespace attntrace
