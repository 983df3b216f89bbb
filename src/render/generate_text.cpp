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
        render_top_tokens(out, m, t.top);
    }
    out << "\ntext: " << printable(g.text) << "\n";
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
                          {"top", next_tokens_json(m, t.top)}});
    j["generated"] = std::move(tokens);
    j["text"] = g.text;
    return j;
}

}  // namespace attntrace
