// What a checkpoint's run shows after its steps: the next tokens, from the
// last row of the logits the run recorded (step `unembed`; kernels/next_token.hpp).
#pragma once

#include <ostream>

#include "core/tensor.hpp"
#include "lesson/lesson.hpp"
#include "model/hf_model.hpp"
#include "trace/trace.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The next tokens of a model's run, or why there are none (an encoder, or
// the trace keeps no row of the logits).
struct ModelEnd {
    std::vector<NextToken> top;
    std::string missing;  // why top is empty
};
// A lesson with config.unembed (a checkpoint's or a lesson's own) has next
// tokens; any other (BERT) only its output.
ModelEnd model_end(const Lesson& lesson, const Trace& trace, std::size_t k);

// "── the next token after ...: softmax(unembed[last])" and the top-k table.
void render_model_end(std::ostream& out, const Lesson& lesson, const ModelEnd& end);
// The same as JSON: {"next_tokens": [{"id", "token", "logit", "probability"}]}.
OrderedJson model_end_json(const Lesson& lesson, const ModelEnd& end);
// The top-k table ("rank token id logit p") and its JSON: [{"id", "token", "logit", "probability"}],
// tokens labelled as the lesson's vocab axis (Lesson::vocab_label).
void render_top_tokens(std::ostream& out, const Lesson& lesson, const std::vector<NextToken>& top);
OrderedJson next_tokens_json(const Lesson& lesson, const std::vector<NextToken>& top);

}  // namespace attntrace
