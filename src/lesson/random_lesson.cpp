#include "lesson/random_lesson.hpp"

#include <fmt/format.h>

#include "lesson/config_fields.hpp"

namespace attntrace {

nlohmann::ordered_json random_lesson_json(const RandomSpec& s) {
    nlohmann::ordered_json j;
    j["format"] = "attntrace-lesson";
    j["version"] = kLessonFormatVersion;
    const std::string kv = s.kv_heads ? fmt::format("-kv{}", s.kv_heads) : "";
    const Arch& a = s.arch;
    const std::string model = fmt::format("{}{}{}", a.blocks > 1 ? fmt::format("-n{}", a.blocks) : "",
                                          a.norm_first ? "-pre" : "", a.decoder ? "-dec" : "");
    j["id"] = fmt::format("random-t{}-c{}-h{}{}-f{}{}-s{}", s.tokens, s.d_model, s.heads, kv, s.d_ff, model, s.seed);
    const std::string what = fmt::format("{}{}{}", a.blocks > 1 ? fmt::format("stack of {} ", a.blocks) : "",
                                         a.norm_first ? "pre-norm " : "", a.decoder ? "decoder" : "encoder");
    j["title"] = fmt::format("A random {} block{}: {} tokens, d_model {}, {} heads{}, d_ff {} (seed {})", what,
                             a.blocks > 1 ? "s" : "", s.tokens, s.d_model, s.heads,
                             s.kv_heads ? fmt::format(" sharing {} K/V heads", s.kv_heads) : "", s.d_ff, s.seed);
    j["source"] = {{"document", "attntrace random"}};
    j["description"] = "Made by attntrace random: X ~ N(0, 1), weights ~ N(0, 1/d_in), biases 0, LayerNorm 1 and 0.";
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    for (std::size_t t = 0; t < s.tokens; ++t) tokens.push_back(fmt::format("t{}", t));
    j["tokens"] = tokens;
    if (a.decoder) {
        nlohmann::ordered_json memory = nlohmann::ordered_json::array();
        for (std::size_t t = 0; t < s.tokens; ++t) memory.push_back(fmt::format("m{}", t));
        j["memory_tokens"] = std::move(memory);
    }
    j["config"] = {{"d_model", s.d_model},
                   {"heads", s.heads},
                   {"d_ff", s.d_ff},
                   {"mask", std::string(mask_name(s.mask_kind()))},
                   {"activation", std::string(activation_name(s.activation))}};
    if (s.norm != NormKind::layernorm) j["config"]["norm"] = std::string(norm_name(s.norm));
    if (s.kv_heads) j["config"]["kv_heads"] = s.kv_heads;
    if (a.blocks > 1) j["config"]["blocks"] = a.blocks;
    if (a.norm_first) j["config"]["norm_first"] = true;
    if (a.decoder) j["config"]["block"] = std::string(spelling_name(config_field("block").spellings, 1));
    j["inputs"] = {{"X", {{"generate", "normal"}, {"seed", s.seed}, {"std", 1.0}}}};
    if (a.decoder) j["inputs"]["memory"] = {{"generate", "normal"}, {"seed", s.seed + 1}, {"std", 1.0}};
    j["weights_seed"] = s.seed;
    return j;
}

}  // namespace attntrace
