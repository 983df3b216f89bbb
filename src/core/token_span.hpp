// Where a token of a model's input came from: the bytes [begin, end) of the
// text as typed (Hugging Face's offset mapping, in bytes). A token no text
// spelled (<s>, [CLS], <|begin_of_text|>) is empty, begin == end at the place
// it stands; pieces of one character after a normalizer (ﬁ -> f, i) share
// that character's bytes. Written in a trace as [begin, end)
// (docs/trace-format.md, token_spans).
#pragma once

#include <cstddef>

namespace attntrace {

struct TokenSpan {
    std::size_t begin = 0, end = 0;  // bytes of the text; begin <= end
    bool empty() const { return begin == end; }
    bool operator==(const TokenSpan&) const = default;
};

}  // namespace attntrace
