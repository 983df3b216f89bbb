// Activation patching (`attntrace patch`, docs/interventions.md), as
// TransformerLens does it: a clean and a corrupt text of the same length; for
// each block x head (or block x position), the corrupt run with that cell of
// one step taken from the clean run, and the normalised logit difference
//   (LD(patched) - LD(corrupt)) / (LD(clean) - LD(corrupt)),
//   LD = logit[answer] - logit[wrong] at the last position.
// Each patched run is the pipeline's own run with the patched cells as a
// partial `given` (lesson/lesson.hpp), started at the patched block from the
// corrupt run's input to it: the blocks before it are not computed again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lesson/lesson.hpp"

namespace attntrace {

struct PatchSpec {
    std::string step = "hook_z";  // hook_z, hook_resid_pre, hook_attn_out or hook_mlp_out
    std::string over = "heads";   // heads (hook_z alone) or positions
    std::int64_t answer = 0, wrong = 0;  // token ids
};

// The steps `patch --step` takes, in the order --help lists them.
const std::vector<std::string>& patch_steps();

struct PatchResult {
    PatchSpec spec;
    std::vector<std::string> rows;     // per block: the step patched ("blocks.1.attn.hook_z")
    std::vector<std::string> columns;  // heads "h0".., or positions "the", "␣ring" (the corrupt text's tokens)
    Tensor normalized;                 // (blocks, columns)
    Tensor logit_diff;                 // (blocks, columns): LD of each patched run
    double ld_clean = 0, ld_corrupt = 0;
    // What was computed: a whole run's passes, and the passes each patched run
    // ran (block b's run starts at b's first pass).
    std::size_t passes_whole = 0;
    std::vector<std::size_t> passes_per_block;
};

// Refusals (InputError, exit 2): a model without next-token logits, texts of
// different lengths, an unknown step, `over heads` with a step that has no
// heads, ids outside the vocabulary. `corrupt` is changed while it runs and
// restored. `progress(done, total)` hears of each patched run.
PatchResult activation_patching(const Lesson& clean, Lesson& corrupt, const PatchSpec& spec,
                                const std::function<void(std::size_t, std::size_t)>& progress = {});

// A token as typed (--answer, --wrong) as one id of the lesson's vocabulary
// (its labels, Lesson::vocab): the label itself ("␣ring"), a leading space
// for the label's ␣ (" ring"), "#id", or a word that is one label alone with
// or without ␣ ("ring" when only one of ring and ␣ring exists). Refuses,
// naming `flag`, a token that is none, or that names several (listing them).
std::int64_t vocab_token(const Lesson& lesson, const std::string& typed, const std::string& flag);

}  // namespace attntrace
