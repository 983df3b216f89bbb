#include "render/generate_text.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"
#include "render/model_view.hpp"

namespace attntrace {

void render_generation(std::ostream& out, const HfModel& m, const Generation& g) {
    out << fmt::format("attntrace · {} — {} tokens generated greedily with the KV cache after a prompt of {}\n",
                       printable(m.dir), g.tokens.size(), g.prompt.size());
    out << "Each token is the argmax of the last position's logits; it is then run through every block as one new "
           "row, its keys and values appended to the caches.\n";
    for (const GeneratedToken& t : g.tokens) {
        out << fmt::format("\nt = {}  '{}'  id {}  logit {:.4f}  p {:.4f}\n", t.t, printable(m.label(t.chosen.id)),
                           t.chosen.id, t.chosen.logit, t.chosen.probability);
        render_top_tokens(out, m.lesson, t.top);
        // Its window: the token run as one new row; block 0's weights from its query over the cache.
        const DecodeStep& w = t.window;
        if (w.pattern.size() == 0) continue;
        const std::size_t NH = w.pattern.shape[0], n = w.pattern.shape[1];
        out << fmt::format("    then run as one row against the caches ({} tokens); block 0's weights from it:\n", n);
        for (std::size_t h = 0; h < NH; ++h) {
            std::string weights;
            for (std::size_t j = 0; j < n; ++j)
                weights += fmt::format("{}{} {:.4f}", j ? "  " : "", printable(m.label(g.ids_at(j))), w.pattern.data[h * n + j]);
            out << fmt::format("      h{}  {}\n", h, weights);
        }
    }
    out << "\ntext: " << printable(g.text) << "\n";
    if (!g.decoded.empty() || !g.continuation.empty()) {
        out << "decoded: " << printable(g.decoded, true) << "\n";
        out << "continuation: " << printable(g.continuation, true) << "\n";
    }
}

OrderedJson generation_json(const HfModel& m, const Generation& g) {
    OrderedJson j;
    j["format"] = "attntrace-generate";
    j["version"] = 1;
    j["model"] = m.dir;
    j["prompt_ids"] = g.prompt;
    OrderedJson tokens = OrderedJson::array();
    for (const GeneratedToken& t : g.tokens)
        tokens.push_back({{"t", t.t},
                          {"id", t.chosen.id},
                          {"token", m.label(t.chosen.id)},
                          {"logit", t.chosen.logit},
                          {"probability", t.chosen.probability},
                          {"top", next_tokens_json(m.lesson, t.top)},
                          {"window", {{"q", tensor_to_json(t.window.q)},
                                      {"k", tensor_to_json(t.window.k)},
                                      {"v", tensor_to_json(t.window.v)},
                                      {"pattern", tensor_to_json(t.window.pattern)},
                                      {"z", tensor_to_json(t.window.z)}}}});
    j["generated"] = std::move(tokens);
    j["text"] = g.text;
    if (m.tokenizer) {
        j["decoded"] = g.decoded;
        j["continuation"] = g.continuation;
    }
    return j;
}

}  // namespace attntrace
