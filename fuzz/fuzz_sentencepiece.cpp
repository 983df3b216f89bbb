// Fuzz target: SentencePiece tokenizer.model files as model/sentencepiece.cpp
// opens them (SentencePiece::from_bytes: our size check and the guard of
// model/sentencepiece_guard.cpp, then Debian's libsentencepiece parsing
// the ModelProto and building its normalizer and segmenter). The library is
// not instrumented (a shared library from Debian): libFuzzer's coverage is
// ours only, and a read out of bounds inside it shows only as a crash. Bytes in; the only acceptable outcomes are a model or an
// InputError. A model that loads encodes some hard texts, each to ids it has
// a piece for, and spans each within the text, in order.
// Built as a libFuzzer binary and as a replay binary (see fuzz_lesson.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz/fuzz_limits.hpp"
#include "model/sentencepiece.hpp"
#include "model/tokenizer.hpp"  // Encoding, spans_fit

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attntrace;
    attntrace::fuzz::apply_limits();
    const std::string input(reinterpret_cast<const char*>(data), size);
    std::optional<SentencePiece> sp;
    try {
        sp = SentencePiece::from_bytes(input, "fuzz/tokenizer.model");
    } catch (const InputError&) {
        return 0;
    }
    const std::string texts[] = {"", "the ring fell, and fell again!", "café 日本語 🙂 ٣ ½ \t\n\u00a0x\u200by",
                                 "I'm we'll 12345   a  ", std::string(300, 'a')};
    for (const std::string& text : texts) {
        std::vector<std::int64_t> ids;
        try {
            ids = sp->encode(text, "fuzz text");
            // the same ids with their spans, each within the text, in order
            Encoding e;
            for (const auto& [id, span] : sp->tokenize(text, "fuzz text")) e.ids.push_back(id), e.spans.push_back(span);
            if (e.ids != ids || !spans_fit(e, text.size())) __builtin_trap();
        } catch (const InputError&) {
            continue;  // the library's own refusal of this text
        }
        for (std::int64_t id : ids)
            if (id < 0 || static_cast<std::size_t>(id) >= sp->size()) __builtin_trap();
        for (std::int64_t id : ids) (void)sp->shown(id);
    }
    return 0;
}
