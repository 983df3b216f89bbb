// Fuzz target: BERT's WordPiece tokenizer (model/wordpiece.hpp). The input is
// a tokenizer.json when it starts with '{', else a vocab.txt (lower-cased
// when its length is even). Bytes in; the only acceptable outcomes are a
// tokenizer or an InputError. A tokenizer that reads encodes some hard texts
// and the input itself, each to ids the vocabulary spells (a piece for every
// id), between the same special tokens, each token spanning bytes of the
// text in order (spans_fit); text that is not UTF-8 is refused.
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "model/wordpiece.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string input(reinterpret_cast<const char*>(data), size);
    std::optional<WordPiece> t;
    try {
        if (!input.empty() && input[0] == '{') t = WordPiece::from_tokenizer_json(input, "fuzz/tokenizer.json");
        else t = WordPiece::from_vocab_txt(input, "fuzz/vocab.txt", size % 2 == 0);
    } catch (const InputError&) {
        return 0;
    }
    const std::string texts[] = {"", "The ring fell, and fell again!", "café 日本語 🙂 ٣ ½ \t\n\u00a0x\u200by",
                                 std::string(150, 'a'), "[MASK] [SEP][CLS]", input.substr(0, 4096)};
    std::size_t specials = SIZE_MAX;
    for (const std::string& text : texts) {
        std::vector<std::int64_t> ids;
        try {
            const Encoding e = t->tokenize(text, "fuzz text");
            if (!spans_fit(e, text.size())) __builtin_trap();  // each token's bytes within the text, in order
            ids = e.ids;
        } catch (const InputError&) {
            continue;  // the input as text: not UTF-8
        }
        for (std::int64_t id : ids)
            if (t->piece(id).empty()) __builtin_trap();
        if (specials == SIZE_MAX) specials = ids.size();  // the empty text: the specials alone
        if (ids.size() < specials) __builtin_trap();
    }
    return 0;
}
