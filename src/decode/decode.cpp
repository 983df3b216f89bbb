#include "decode/decode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/kernels.hpp"
#include "kernels/positions.hpp"
#include "decode/decode_rows.hpp"

namespace attntrace {

namespace {

// Steps of the attention core a lesson may not give for the decode to be the
// formula's: from there on the run carries the article's numbers.
constexpr const char* kCore[] = {"blocks.0.attn.hook_scores_raw", "blocks.0.attn.hook_scores_scaled",
                                 "blocks.0.attn.hook_mask", "blocks.0.attn.hook_attn_scores",
                                 "blocks.0.attn.softmax.hook_exp", "blocks.0.attn.hook_pattern"};

// Why the decode does not apply, or "" when it does.
std::string not_applicable(const Lesson& lesson, const Trace& full) {
    if (lesson.config.mask != MaskKind::causal) return "the lesson's mask is not causal";
    if (lesson.batch) return "the lesson is a batch (decode follows one sequence)";
    if (!lesson.query_tokens.empty()) return "the queries are not the tokens (query_tokens)";
    if (lesson.from > Stage::qkv || lesson.to < Stage::mix) return "the run does not go from qkv (or embed) to mix";
    for (const auto& [name, value] : lesson.given)
        if (const StepDef* def = lesson.catalogue().find(name))
            for (const char* core : kCore)
                if (def->base == core) return fmt::format("the lesson gives {}: the article's numbers, not attention's", name);
    const Step* x = full.find("blocks.0.hook_resid_pre");
    if (!x || x->source == StepSource::not_computable) return "blocks.0.hook_resid_pre is not computable";
    for (const Step& s : full.steps)
        if (s.recorded != Record::full) return fmt::format("the trace policy did not keep {} in full", s.name);
    for (const char* leaf : {"hook_q", "hook_k", "hook_v", "hook_pattern", "hook_z"}) {
        const Step* s = full.find(std::string("blocks.0.attn.") + leaf);
        if (!s || s->source == StepSource::not_computable) return fmt::format("blocks.0.attn.{} is not computable", leaf);
    }
    return "";
}

}  // namespace

bool DecodeReport::matches() const {
    if (!applicable) return false;
    return std::all_of(steps.begin(), steps.end(), [](const DecodeStep& s) {
        return s.dev_k <= kDecodeTol && s.dev_pattern <= kDecodeTol && s.dev_z <= kDecodeTol &&
               s.dev_rows <= kDecodeTol && s.future_weight == 0;
    });
}

DecodeReport decode_lesson(const Lesson& lesson, const Trace& full) {
    DecodeReport report;
    report.why_not = not_applicable(lesson, full);
    if (!report.why_not.empty()) return report;
    report.applicable = true;
    decode_detail::RowDecoder decoder(lesson, full);
    for (std::size_t t = 0; t < lesson.tokens.size(); ++t) {
        DecodeStep s;
        s.t = t;
        s.token = lesson.tokens[t];
        decoder.step(t, s);  // stops at a pass whose weights the lesson lacks, as the run did
        report.max_dev = std::max({report.max_dev, s.dev_k, s.dev_pattern, s.dev_z, s.dev_rows});
        report.steps.push_back(std::move(s));
    }
    report.cache_floats = decoder.cache_floats();
    report.through = decoder.through();
    report.attentions = 0;
    for (const Pass& p : lesson.catalogue().passes())
        if (p.stage == Stage::mix) ++report.attentions;
    return report;
}

}  // namespace attntrace
