// The end of a checkpoint's run: the final norm, the unembedding, the next tokens.
#include "render/model_view.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/printable.hpp"

namespace attntrace {

namespace {

// The lesson's last step: the logits of a causal model, the last block's output of an encoder.
const std::string& output_step(const Lesson& lesson) {
    const Catalogue& cat = lesson.catalogue();
    return cat.at(cat.passes().back().out).name;
}

}  // namespace

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

void render_model_end(std::ostream& out, const Lesson& lesson, const ModelEnd& end) {
    if (!lesson.config.arch.unembed) {
        // BERT: not causal, so no next token; the pooler and the masked-LM head are not read.
        out << fmt::format("\n── the output: {}\n", output_step(lesson));
        out << "    the last block's output is the model's: one vector per token, each having seen every token.\n"
               "    Not causal: no next-token table. The pooler and the masked-LM head are not computed.\n";
        return;
    }
    const std::string after = printable(lesson.tokens.back());
    out << fmt::format("\n── the next token after '{}': p = softmax(unembed['{}']), over the {} entries of the vocabulary\n",
                       after, after, lesson.dims().V);
    if (end.top.empty()) {
        out << "    not computed: " << end.missing << "\n";
        return;
    }
    render_top_tokens(out, lesson, end.top);
}

void render_top_tokens(std::ostream& out, const Lesson& lesson, const std::vector<NextToken>& top) {
    out << fmt::format("    {:>4}  {:<20} {:>8}  {:>10}  {:>8}\n", "rank", "token", "id", "logit", "p");
    for (std::size_t i = 0; i < top.size(); ++i) {
        const NextToken& t = top[i];
        const std::string label = printable(lesson.vocab_label(t.id));
        // pad by characters shown, not bytes: ␣ is 3 bytes
        std::size_t width = 0;
        for (unsigned char c : label) width += (c & 0xC0) != 0x80;
        out << fmt::format("    {:>4}  {}{} {:>8}  {:>10.4f}  {:>8.4f}\n", i + 1, label,
                           std::string(width < 20 ? 20 - width : 0, ' '), t.id, t.logit, t.probability);
    }
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
