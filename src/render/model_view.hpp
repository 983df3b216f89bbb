// What a checkpoint's run shows after its blocks: the final norm, the
// unembedding and the next tokens (model/hf_model.hpp computes them).
#pragma once

#include <ostream>

#include "core/tensor.hpp"
#include "model/hf_model.hpp"
#include "trace/trace.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

struct Lesson;

// The head of a model's run, or why it cannot be computed from this trace
// (the policy kept the last block's output only as a summary).
struct ModelEnd {
    std::optional<ModelHead> head;
    std::string missing;  // why head is empty
};
ModelEnd model_end(const HfModel& m, const Lesson& lesson, const Trace& trace, std::size_t k);

// "── ln_final.hook_normalized, unembed: the next token after ..." and the top-k table.
void render_model_end(std::ostream& out, const HfModel& m, const Lesson& lesson, const ModelEnd& end);
// The same as JSON: {"ln_final": ..., "next_tokens": [{"id", "token", "logit", "probability"}]}.
OrderedJson model_end_json(const HfModel& m, const ModelEnd& end);
// The top-k table ("rank token id logit p") and its JSON: [{"id", "token", "logit", "probability"}].
void render_top_tokens(std::ostream& out, const HfModel& m, const std::vector<NextToken>& top);
OrderedJson next_tokens_json(const HfModel& m, const std::vector<NextToken>& top);

}  // namespace attntrace
