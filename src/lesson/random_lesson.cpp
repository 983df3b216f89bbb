#include "lesson/random_lesson.hpp"

#include <fmt/format.h>

namespace attntrace {

nlohmann::ordered_json random_lesson_json(const RandomSpec& s) {
    nlohmann::ordered_json j;
    j["format"] = "attntrace-lesson";
    j["version"] = kLessonFormatVersion;
    const std::string kv = s.kv_heads ? fmt::format("-kv{}", s.kv_heads) : "";
    j["id"] = fmt::format("random-t{}-c{}-h{}{}-f{}-s{}", s.tokens, s.d_model, s.heads, kv, s.d_ff, s.seed);
    j["title"] = fmt::format("A random encoder block: {} tokens, d_model {}, {} heads{}, d_ff {} (seed {})", s.tokens,
                             s.d_model, s.heads, s.kv_heads ? fmt::format(" sharing {} K/V heads", s.kv_heads) : "",
                             s.d_ff, s.seed);
    j["source"] = {{"document", "attntrace random"}};
    j["description"] = "Made by attntrace random: X ~ N(0, 1), weights ~ N(0, 1/d_in), biases 0, LayerNorm 1 and 0.";
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    for (std::size_t t = 0; t < s.tokens; ++t) tokens.push_back(fmt::format("t{}", t));
    j["tokens"] = std::move(tokens);
    j["config"] = {{"d_model", s.d_model},
                   {"heads", s.heads},
                   {"d_ff", s.d_ff},
                   {"mask", std::string(mask_name(s.mask))},
                   {"activation", std::string(activation_name(s.activation))}};
    if (s.norm != NormKind::layernorm) j["config"]["norm"] = std::string(norm_name(s.norm));
    if (s.kv_heads) j["config"]["kv_heads"] = s.kv_heads;
    j["inputs"] = {{"X", {{"generate", "normal"}, {"seed", s.seed}, {"std", 1.0}}}};
    j["weights_seed"] = s.seed;
    return j;
}

}  // namespace attntrace
