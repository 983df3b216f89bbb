// What a checkpoint's run shows after its steps: the next tokens that
// evaluate/model_end.hpp found in the last row of its logits, as text and JSON.
#pragma once

#include <ostream>

#include "core/tensor.hpp"
#include "lesson/lesson.hpp"
#include "evaluate/model_end.hpp"
#include "model/hf_model.hpp"
#include "trace/trace.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// "── the next token after ...: softmax(unembed[last])" and the top-k table.
// Wrapped to `width` display columns (0: not wrapped).
void render_model_end(std::ostream& out, const Lesson& lesson, const ModelEnd& end, std::size_t width = 0);
// The top-k table ("rank token id logit p"), tokens labelled as the lesson's
// vocab axis (Lesson::vocab_label). Their JSON (model_end_json,
// next_tokens_json) is evaluate/model_end.hpp's: the export writes it too.
void render_top_tokens(std::ostream& out, const Lesson& lesson, const std::vector<NextToken>& top);

}  // namespace attntrace
