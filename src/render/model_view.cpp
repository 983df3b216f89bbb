// The end of a checkpoint's run drawn: the next tokens (evaluate/model_end.hpp computes them).
#include "render/model_view.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/printable.hpp"
#include "render/wrap.hpp"

namespace attntrace {

void render_model_end(std::ostream& out, const Lesson& lesson, const ModelEnd& end, std::size_t width) {
    if (!lesson.config.arch.unembed) {
        // BERT: not causal, so no next token; the pooler and the masked-LM head are not read.
        out << "\n" << wrap_text(fmt::format("── the output: {}", output_step(lesson)), width, "", "   ");
        out << wrap_text("the last block's output is the model's: one vector per token, each having seen every token.",
                         width, "    ", "    ")
            << wrap_text("Not causal: no next-token table. The pooler and the masked-LM head are not computed.", width,
                         "    ", "    ");
        return;
    }
    const std::string after = printable(lesson.tokens.back());
    out << "\n"
        << wrap_text(fmt::format("── the next token after '{}': p = softmax(unembed['{}']), over the {} entries of the "
                                 "vocabulary",
                                 after, after, lesson.dims().V),
                     width, "", "   ");
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

}  // namespace attntrace
