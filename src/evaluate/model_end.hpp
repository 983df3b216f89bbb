// The end of a run that has a head (config.unembed): its next tokens, from
// the last row of the logits the run recorded (kernels/next_token.hpp), or
// why there are none. Computed here; render/model_view.hpp draws it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/next_token.hpp"
#include "lesson/lesson.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The next tokens of a model's run, or why there are none (an encoder, or
// the trace keeps no row of the logits).
struct ModelEnd {
    std::vector<NextToken> top;
    std::string missing;  // why top is empty
};

// The lesson's last step: the logits of a causal model, the last block's output of an encoder.
const std::string& output_step(const Lesson& lesson);

// A lesson with config.unembed (a checkpoint's or a lesson's own) has next
// tokens, the k most likely; any other (BERT) only its output.
ModelEnd model_end(const Lesson& lesson, const Trace& trace, std::size_t k);

}  // namespace attntrace
