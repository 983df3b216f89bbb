#include "render/generate_text.hpp"

#include <fmt/format.h>

#include "core/printable.hpp"
#include "render/model_view.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

// Decoded text, its own line breaks kept: its first line after `label`,
// each line wrapped to the width.
std::string text_lines(const std::string& text, std::size_t width, std::string_view label) {
    std::string out;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find('\n', start);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        out += start == 0 ? wrap_hanging(line, width, label) : wrap_text(line, width, "", "");
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

// A sampled token: the distribution it was drawn from (its first rows), the number drawn and the token.
void render_draw(std::ostream& out, const HfModel& m, const GeneratedToken& t, std::size_t width) {
    const TokenSampler::Draw& d = t.draw;
    out << wrap_text(fmt::format("u = {:.4f} picks rank {} of the {} kept (p: after temperature and truncation):", d.u,
                                 d.index + 1, d.kept.size()),
                     width, "    ", "      ");
    const std::size_t shown = std::min(d.kept.size(), std::max(t.top.size(), d.index + 1));
    render_top_tokens(out, m.lesson, std::vector<NextToken>(d.kept.begin(), d.kept.begin() + static_cast<std::ptrdiff_t>(shown)));
    if (shown < d.kept.size()) {
        double rest = 0;
        for (std::size_t i = shown; i < d.kept.size(); ++i) rest += d.kept[i].probability;
        out << wrap_text(fmt::format("… {} more kept, p {:.4f} together", d.kept.size() - shown, rest), width, "    ", "      ");
    }
}

}  // namespace

void render_generation(std::ostream& out, const HfModel& m, const Generation& g, std::size_t width) {
    const Sampling& s = g.sampling;
    out << wrap_text(fmt::format("attntrace · {} — {} tokens generated {} with the KV cache after a prompt of {}",
                                 printable(m.dir), g.tokens.size(), s.greedy() ? "greedily" : "by sampling",
                                 g.prompt.size()),
                     width, "", "    ");
    out << wrap_text(s.greedy() ? "Each token is the argmax of the last position's logits; it is then run through every "
                                  "block as one new row, its keys and values appended to the caches."
                                : fmt::format("Each token is drawn from softmax(logits / {}) of the last position{}{}, "
                                              "with seed {}; it is then run through every block as one new row, its "
                                              "keys and values appended to the caches.",
                                              s.temperature, s.top_k ? fmt::format(", its {} most likely", s.top_k) : "",
                                              s.top_p < 1 ? fmt::format(", cut where their mass reaches {}", s.top_p) : "",
                                              s.seed),
                     width, "", "");
    for (const GeneratedToken& t : g.tokens) {
        out << "\n"
            << wrap_text(fmt::format("t = {}  '{}'  {}  {}  {}", t.t, printable(m.label(t.chosen.id)),
                                     unbroken(fmt::format("id {}", t.chosen.id)),
                                     unbroken(fmt::format("logit {:.4f}", t.chosen.logit)),
                                     unbroken(fmt::format("p {:.4f}", t.chosen.probability))),
                         width, "", "    ");
        if (s.greedy()) render_top_tokens(out, m.lesson, t.top);
        else render_draw(out, m, t, width);
        // Its window: the token run as one new row; block 0's weights from its query over the cache.
        const DecodeStep& w = t.window;
        if (w.pattern.size() == 0) continue;
        const std::size_t NH = w.pattern.shape[0], n = w.pattern.shape[1];
        out << wrap_text(fmt::format("then run as one row against the caches ({} tokens); block 0's weights from it:", n),
                         width, "    ", "      ");
        for (std::size_t h = 0; h < NH; ++h) {
            std::string weights;  // each key's token and weight one word for the wrapping
            for (std::size_t j = 0; j < n; ++j)
                weights += (j ? "  " : "") +
                           unbroken(fmt::format("{} {:.4f}", printable(m.label(g.ids_at(j))), w.pattern.data[h * n + j]));
            out << wrap_hanging(weights, width, fmt::format("      h{}  ", h));
        }
    }
    out << "\n" << wrap_hanging(printable(g.text), width, "text: ");
    if (!g.decoded.empty() || !g.continuation.empty()) {
        out << text_lines(printable(g.decoded, true), width, "decoded: ");
        out << text_lines(printable(g.continuation, true), width, "continuation: ");
    }
}

namespace {

// A sampled token's distribution (null when greedy): the kept tokens, the first kDrawnJsonTokens of them
// listed, the mass of the others, the number drawn and the rank drawn.
OrderedJson draw_json(const HfModel& m, const TokenSampler::Draw& d, const Sampling& s) {
    if (s.greedy()) return nullptr;
    const std::size_t listed = std::min(d.kept.size(), kDrawnJsonTokens);
    double rest = 0;
    for (std::size_t i = listed; i < d.kept.size(); ++i) rest += d.kept[i].probability;
    return {{"kept", d.kept.size()},
            {"distribution", next_tokens_json(m.lesson, std::vector<NextToken>(d.kept.begin(), d.kept.begin() + static_cast<std::ptrdiff_t>(listed)))},
            {"rest_probability", rest},
            {"u", d.u},
            {"rank", d.index + 1}};
}

}  // namespace

OrderedJson generation_json(const HfModel& m, const Generation& g) {
    OrderedJson j;
    j["format"] = "attntrace-generate";
    j["version"] = 1;
    j["model"] = m.dir;
    if (!g.sampling.greedy())
        j["sampling"] = {{"temperature", g.sampling.temperature},
                         {"top_k", g.sampling.top_k ? OrderedJson(g.sampling.top_k) : OrderedJson(nullptr)},
                         {"top_p", g.sampling.top_p},
                         {"seed", g.sampling.seed}};
    j["prompt_ids"] = g.prompt;
    OrderedJson tokens = OrderedJson::array();
    for (const GeneratedToken& t : g.tokens)
        tokens.push_back({{"t", t.t},
                          {"id", t.chosen.id},
                          {"token", m.label(t.chosen.id)},
                          {"logit", t.chosen.logit},
                          {"probability", t.chosen.probability},
                          {"top", next_tokens_json(m.lesson, t.top)},
                          {"drawn_from", draw_json(m, t.draw, g.sampling)},
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
