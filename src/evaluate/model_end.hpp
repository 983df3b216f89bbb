// The end of a run that has a head (config.unembed): its next tokens, from
// the last row of the logits the run recorded (kernels/next_token.hpp), or
// why there are none. Computed here and written into the export (its "model"
// field, docs/trace-format.md); render/model_view.hpp draws it as text, the
// report's page from the export.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/next_token.hpp"
#include "lesson/lesson.hpp"
#include "trace/json_text.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The next tokens of a model's run, or why there are none (an encoder, or
// the trace keeps no row of the logits).
struct ModelEnd {
    std::vector<NextToken> top;
    std::string missing;  // why top is empty
};

// How many next tokens an export records (and run shows unless --top-k says):
// enough to see the runner-up and the tail without a vocabulary-long table.
inline constexpr std::size_t kNextTokensShown = 10;

// The lesson's last step: the logits of a causal model, the last block's output of an encoder.
const std::string& output_step(const Lesson& lesson);

// A lesson with config.unembed (a checkpoint's or a lesson's own) has next
// tokens, the k most likely; any other (BERT) only its output.
ModelEnd model_end(const Lesson& lesson, const Trace& trace, std::size_t k);

// The next tokens as JSON, tokens labelled as the lesson's vocab axis
// (Lesson::vocab_label): [{"id", "token", "logit", "probability"}].
OrderedJson next_tokens_json(const Lesson& lesson, const std::vector<NextToken>& top);
// A run's end as JSON: {"next_tokens": [...]} (with a head, after the last
// token), {"not_computed": why} (a head but no full logits), or {"output":
// why there are no next tokens} (an encoder).
OrderedJson model_end_json(const Lesson& lesson, const ModelEnd& end);

}  // namespace attntrace
