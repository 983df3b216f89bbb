// tokenizer.json's pre_tokenizer and post_processor sections: GPT-2's
// ByteLevel, or Llama 3's and Qwen2's Sequence of a Split and a ByteLevel;
// TemplateProcessing's special tokens around the text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "model/tokenizer.hpp"

namespace attntrace {

// "ByteLevel" (GPT-2's: its pattern), or a Sequence of a Split (its Regex,
// Isolated) and a ByteLevel that applies no pattern of its own (Llama 3, Qwen2).
void Tokenizer::read_pre_tokenizer(const json& p, const Fields& f) {
    auto byte_level = [&](const json& b, const std::string& path) {
        if (auto* a = f.optional(b, "add_prefix_space"); a && f.boolean(*a, join(path, "add_prefix_space")))
            f.fail(join(path, "add_prefix_space"), "false (as GPT-2's)", "true");
    };
    f.object(p, "pre_tokenizer");
    const std::string type = f.string(f.member(p, "pre_tokenizer", "type"), "pre_tokenizer.type");
    if (type == "ByteLevel") return byte_level(p, "pre_tokenizer");
    if (type != "Sequence")
        f.fail("pre_tokenizer.type", "\"ByteLevel\" (GPT-2's) or \"Sequence\" (a Split, then ByteLevel: Llama 3's, Qwen2's)",
               describe(p["type"]));
    const json& list = f.member(p, "pre_tokenizer", "pretokenizers");
    if (!list.is_array() || list.size() != 2)
        f.fail("pre_tokenizer.pretokenizers", "two pre-tokenizers: a Split, then a ByteLevel", describe(list));
    const std::string sp = "pre_tokenizer.pretokenizers[0]", bp = "pre_tokenizer.pretokenizers[1]";
    const json& split = f.object(list[0], sp);
    if (f.string(f.member(split, sp, "type"), join(sp, "type")) != "Split")
        f.fail(join(sp, "type"), "\"Split\"", describe(split["type"]));
    const json& pattern = f.object(f.member(split, sp, "pattern"), join(sp, "pattern"));
    pattern_path_ = join(join(sp, "pattern"), "Regex");
    pattern_text_ = f.string(f.member(pattern, join(sp, "pattern"), "Regex"), pattern_path_);
    if (pattern_text_.empty()) f.fail(pattern_path_, "a non-empty pattern", "\"\"");
    if (auto* b = f.optional(split, "behavior"); b && f.string(*b, join(sp, "behavior")) != "Isolated")
        f.fail(join(sp, "behavior"), "\"Isolated\" (matches and the text between them are pieces)", describe(*b));
    if (auto* i = f.optional(split, "invert"); i && f.boolean(*i, join(sp, "invert"))) f.fail(join(sp, "invert"), "false", "true");
    const json& bl = f.object(list[1], bp);
    if (f.string(f.member(bl, bp, "type"), join(bp, "type")) != "ByteLevel") f.fail(join(bp, "type"), "\"ByteLevel\"", describe(bl["type"]));
    byte_level(bl, bp);
    if (auto* u = f.optional(bl, "use_regex"); !u || f.boolean(*u, join(bp, "use_regex")))
        f.fail(join(bp, "use_regex"), "false (the Split before it splits the text)", u ? "true" : "absent (true)");
}

// TemplateProcessing's single sequence: its special tokens before and after "A".
// Other post-processors (ByteLevel: offsets only) add no tokens.
void Tokenizer::read_post_processor(const json& pp, const Fields& f) {
    f.object(pp, "post_processor");
    if (!pp.contains("type") || pp["type"] != "TemplateProcessing") return;
    const json& single = f.member(pp, "post_processor", "single");
    if (!single.is_array()) f.fail("post_processor.single", "an array", describe(single));
    const json& specials = f.object(f.member(pp, "post_processor", "special_tokens"), "post_processor.special_tokens");
    bool seen_a = false;
    for (std::size_t i = 0; i < single.size(); ++i) {
        const std::string path = index("post_processor.single", i);
        const json& item = f.object(single[i], path);
        if (item.contains("Sequence")) {
            seen_a = true;
            continue;
        }
        const json& st = f.object(f.member(item, path, "SpecialToken"), join(path, "SpecialToken"));
        const std::string name = f.string(f.member(st, join(path, "SpecialToken"), "id"), join(join(path, "SpecialToken"), "id"));
        const std::string sp = join("post_processor.special_tokens", name);
        const json& entry = f.object(f.member(specials, "post_processor.special_tokens", name.c_str()), sp);
        const json& ids = f.member(entry, sp, "ids");
        if (!ids.is_array() || ids.empty()) f.fail(join(sp, "ids"), "a non-empty array of ids", describe(ids));
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const std::string at = index(join(sp, "ids"), k);
            const std::int64_t id = f.integer(ids[k], at, 0, static_cast<std::int64_t>(kMaxVocabEntries) - 1);
            // Read after model.vocab and added_tokens: the id must name one of their pieces.
            if (static_cast<std::size_t>(id) >= pieces_.size() || pieces_[static_cast<std::size_t>(id)].empty())
                f.fail(at, "the id of a piece of model.vocab or added_tokens", fmt::format("{}, which names none", id));
            (seen_a ? suffix_ : prefix_).push_back(id);
        }
    }
}

}  // namespace attntrace
