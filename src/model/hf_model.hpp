// A Hugging Face checkpoint folder as a lesson the pipeline runs: config.json
// says the architecture (model_type), the safetensors files hold the
// weights, the tokenizer's files turn text into ids. docs/models.md gives the
// mapping tensor by tensor.
//
// The model's blocks become a lesson's stack (config.blocks, norm_first, the
// causal mask, learned positions, inputs.embedding and inputs.positions);
// the final norm and the unembedding are the lesson's last passes
// (config.final_norm, config.unembed: steps ln_final.*, unembed), and the
// next tokens come from the logits' last row (kernels/next_token.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_field.hpp"
#include "core/tensor.hpp"
#include "kernels/next_token.hpp"  // NextToken, next_tokens: the logits' last row ranked
#include "lesson/lesson.hpp"
#include "model/tokenizer.hpp"
#include "model/wordpiece.hpp"

namespace attntrace {

// The model types this attntrace maps, for the refusal of another.
std::string known_model_types();

// What the model reads: a text (tokenized by the folder's tokenizer) or ids.
struct ModelInput {
    std::optional<std::string> text;
    std::vector<std::int64_t> ids;
    std::string text_source = "--text";  // where the text came from, for its errors
    std::string ids_source = "--ids";    // where the ids came from
};

struct HfModel {
    std::string dir;
    std::string model_type;  // "gpt2"
    Lesson lesson;           // the blocks, their weights, the tokens
    std::optional<Tokenizer> tokenizer;  // when the folder has one
    std::optional<WordPiece> wordpiece;  // BERT's, when the folder has one
    // A causal model with an unembedding (GPT-2, the Llama family): its lesson
    // ends in the final norm and the logits (config.final_norm, config.unembed)
    // and has next tokens. false for BERT: its output is the last block's.
    bool lm_head() const { return lesson.config.arch.unembed; }
    // The most tokens the model reads (a prompt and what decode --generate adds), and config.json's field for it.
    std::size_t max_positions = 0;
    std::string positions_field;
    // A token id as shown: its piece (the leading space as ␣, a newline ↵, a
    // tab ⇥, another control character escaped: \x08, \u0085), else "#id".
    std::string label(std::int64_t id) const;
};

// Reads DIR/config.json, the weights and the tokenizer, and tokenizes the
// input. Refusals (InputError, exit 2) name the file and the field or tensor:
// an unknown model_type (listing the known), a missing tensor, one of the
// wrong shape, ids past the vocabulary, more tokens than n_positions. The
// size of every weight as the run holds it (float32, or a 16-bit matrix read in place) is held to
// --max-memory before any is converted.
HfModel load_hf_model(const std::string& dir, const ModelInput& input);

// For the families' loaders (gpt2, bert, llama): refuses, naming `where`, weights
// whose `bytes` (float32 values, or a matrix read in place in its stored
// dtype, as the family counts what it holds at once: `what`) exceed
// --max-memory, before any is converted.
void require_weight_budget(const std::string& where, std::size_t bytes, const std::string& what);
// For the families' config readers: config.json's norm eps under `key` (absent:
// `fallback`), refused naming the field unless from kMinEps to kMaxEps, the
// range a lesson's config.eps is held to (lesson/lesson.hpp).
double read_norm_eps(const Fields& f, const json& config, const char* key, double fallback);
// The lesson's common part: its file and source (the folder), its id
// ("<prefix>-<folder>", made of letters, digits and -_. only), its title, the
// token ids and their pieces as labels.
void start_model_lesson(HfModel& m, const std::string& id_prefix, std::string title,
                        const std::vector<std::int64_t>& ids);

}  // namespace attntrace
