// Generation with the KV cache: a causal checkpoint's prompt, then N tokens,
// each the argmax of the last position's logits (the step unembed) or drawn
// from them (decode/sample.hpp: temperature, top-k, top-p, a seed), run
// through the model as one new row by decode's machinery (run_window over the
// KeyCache, pipeline/run.hpp): no second implementation of the block.
//
// Letters: T tokens so far, C d_model, V vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/decode.hpp"
#include "decode/sample.hpp"
#include "model/hf_model.hpp"

namespace attntrace {

// --generate's bounds: at least one token, at most this many (and the prompt
// plus them within the model's positions).
inline constexpr std::size_t kMaxGenerate = 1024;

// The generated token's logits and the whole run's last-row logits over the
// same tokens are the same sums in another order (one row against the cache,
// the run's blocked products), through every block, the final norm and a
// C-long dot product per vocabulary entry: float32 rounding, grown by the
// logits' magnitude (|logit| <= ~10 on the tiny checkpoints). 1e-4 absolute
// is 10 kDecodeTol, for the C-long dot product after the rows decode holds to
// it; measured: 0 (bit for bit) over 8 tokens on tiny-gpt2 and tiny-llama.
inline constexpr double kGenerateLogitTol = 1e-4;

struct GeneratedToken {
    std::size_t t = 0;              // its position in prompt + generated
    NextToken chosen;               // the token taken at t - 1 (its probability: softmax of the logits at T = 1)
    std::vector<NextToken> top;     // the top-k there by logit (greedy: chosen first)
    // Sampled: the distribution it was drawn from (after temperature and truncation, most likely
    // first, summing to 1), the uniform number drawn and the index drawn; greedy: the argmax alone.
    TokenSampler::Draw draw;
    std::vector<float> logits;      // (V) the logits it was chosen from
    DecodeStep window;              // its row through the model, as decode shows a step: block 0's q, k, v, weights, z
};

struct Generation {
    Sampling sampling;                     // greedy unless a temperature was given
    std::vector<std::int64_t> prompt;      // the prompt's ids
    std::vector<GeneratedToken> tokens;    // N of them
    std::string text;                      // prompt + generated, as pieces joined (the leading space as ␣)
    // prompt + generated and the generated alone as the folder's tokenizer
    // decodes them (Tokenizer::decode: the text they spell); empty without a tokenizer
    std::string decoded, continuation;
    // The id at position j of prompt + generated.
    std::int64_t ids_at(std::size_t j) const { return j < prompt.size() ? prompt[j] : tokens.at(j - prompt.size()).chosen.id; }
};

// Why `m` cannot generate `n` tokens (exit 2 for the CLI), empty when it can
// (`n` signed, as --generate is read, so that -1 is refused as -1):
// a model with no next-token head (BERT), n outside 1..kMaxGenerate, or the
// prompt plus n past the model's positions (naming its config field).
struct GenerateRefusal {
    std::string expected, found;  // empty: none
};
GenerateRefusal generate_refusal(const HfModel& m, std::int64_t n);

// Generates `n` tokens after m.lesson's tokens (m.lesson.token_ids and tokens
// grow by them), keeping the top `k` at each step, each token the argmax or
// drawn under `s`. Checks generate_refusal and sampling_refusal. `after`,
// when given, hears of each window as it ends (the prompt's, then each
// generated token's, with its position): what bench --generate times.
Generation generate(HfModel& m, std::int64_t n, std::size_t k, const Sampling& s = {},
                    const std::function<void(std::size_t)>& after = {});

}  // namespace attntrace
