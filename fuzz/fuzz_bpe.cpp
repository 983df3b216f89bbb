// Fuzz target: the byte-level BPE tokenizer's tokenizer.json reader
// (model/tokenizer.hpp: GPT-2's, Llama 3's Split pre-tokenizer and its
// TemplateProcessing, Qwen2's and its normalizers). Bytes in; the only acceptable outcomes are a
// tokenizer or an InputError. A tokenizer that reads encodes some hard texts
// and the input itself, each to ids the vocabulary spells (a piece for every
// id), which decode to valid UTF-8, each token spanning bytes of the text in
// order (spans_fit); text that is not UTF-8 is refused.
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "model/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string input(reinterpret_cast<const char*>(data), size);
    std::optional<Tokenizer> t;
    try {
        t = Tokenizer::from_tokenizer_json(input, "fuzz/tokenizer.json");
    } catch (const InputError&) {
        return 0;
    }
    const std::string texts[] = {"", "the ring fell, and fell again!", "café 日本語 🙂 ٣ ½ \t\n\u00a0x\u200by",
                                 "I'm we'll 12345   a  ", "cafe\u0301 \u0130 \ufb01 \ufdfa \u1100\u1161", std::string(300, 'a'),
                                 input.substr(0, 4096)};
    for (const std::string& text : texts) {
        std::vector<std::int64_t> ids;
        try {
            const Encoding e = t->tokenize(text, "fuzz text");
            if (!spans_fit(e, text.size())) __builtin_trap();  // each token's bytes within the text, in order
            ids = e.ids;
        } catch (const InputError&) {
            continue;  // the input as text: not UTF-8; a byte the vocabulary lacks
        }
        for (std::int64_t id : ids)
            if (id < 0 || static_cast<std::size_t>(id) >= t->vocab_size() || t->piece(id).empty()) __builtin_trap();
        // the ids decode to valid UTF-8 (pieces that are no byte-level characters, cut characters: U+FFFD)
        if (first_invalid_utf8(t->decode(ids))) __builtin_trap();
    }
    return 0;
}
