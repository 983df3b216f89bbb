#include "evaluate/model_end.hpp"

#include <fmt/format.h>

#include "trace/derived.hpp"

namespace attntrace {

const std::string& output_step(const Lesson& lesson) {
    const Catalogue& cat = lesson.catalogue();
    return cat.at(cat.passes().back().out).name;
}

ModelEnd model_end(const Lesson& lesson, const Trace& trace, std::size_t k) {
    ModelEnd end;
    const std::string& name = output_step(lesson);
    if (!lesson.config.arch.unembed) {
        end.missing = "no head read (an encoder: its output is " + name + ")";
        return end;
    }
    const Step* s = trace.find(name);
    if (!s || s->recorded != Record::full || s->source == StepSource::not_computable) {
        end.missing = fmt::format("the next tokens need {} in full; --trace {} keeps it {}", name,
                                  trace.policy.describe(), s ? "only as a summary" : "not at all");
        return end;
    }
    // the last row of the logits (T, V)
    const std::size_t V = s->shape.back();
    const StepValues logits = values_of(trace, *s);
    end.top = next_tokens(logits->ptr() + logits->size() - V, V, k);
    return end;
}

OrderedJson next_tokens_json(const Lesson& lesson, const std::vector<NextToken>& top) {
    OrderedJson j = OrderedJson::array();
    for (const auto& t : top)
        j.push_back({{"id", t.id}, {"token", lesson.vocab_label(t.id)}, {"logit", t.logit}, {"probability", t.probability}});
    return j;
}

OrderedJson model_end_json(const Lesson& lesson, const ModelEnd& end) {
    OrderedJson j;
    if (!lesson.config.arch.unembed) {
        j["output"] = end.missing;
        return j;
    }
    if (end.top.empty()) {
        j["not_computed"] = end.missing;
        return j;
    }
    j["next_tokens"] = next_tokens_json(lesson, end.top);
    return j;
}

}  // namespace attntrace
