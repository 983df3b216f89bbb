// Sentences that say how one token attends to the others, their numbers
// paired with the tokens they name: "ring" attends 51% to "fell", 31% to
// itself and 19% to "the"; from "The" (15%), "cat" (30%) and itself (55%).
// A number is paired with the token right after it ("51% to fell") or right
// before it ("cat" (30%), "cat: 30%"); "itself" is the query, the last token
// the sentence names before its first number. One pass over each line's words.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "draft/printed.hpp"

namespace attntrace {

struct ProseRow {
    std::size_t query = 0;                       // the token that attends, by index in the example's tokens
    std::vector<std::size_t> keys;               // the tokens it attends to, as the numbers name them
    std::vector<PrintedNumber> numbers;          // one per key (a percentage as a fraction, 2 more decimals)
    std::vector<std::size_t> arrays;             // the prose arrays these numbers were read as
    const PrintedArray* first = nullptr;         // the first of them: where, and the quote
};

// The rows stated in the prose lines [from_line, to_line) of `art`, for an example of `tokens` (a token
// written twice is no key: which one a sentence means is unclear). Numbers already `used` are left.
std::vector<ProseRow> prose_rows(const Article& art, const std::vector<std::string>& tokens, std::size_t from_line,
                                 std::size_t to_line, const std::vector<bool>& used);

// A line that names a query and a key of the example and works out their number ("tea · love = 0.4*1.0 +
// 1.8*0.2 = 0.76", "score(cat, sat) = 1.20"): exactly two mentions of tokens (the same twice for a token
// with itself), then the line's last number after an equals sign.
struct ProsePair {
    std::size_t query = 0, key = 0;  // by index in the example's tokens
    std::size_t array = 0;           // the prose array of the line's last number
};
std::vector<ProsePair> prose_pairs(const Article& art, const std::vector<std::string>& tokens, std::size_t from_line,
                                   std::size_t to_line, const std::vector<bool>& used);

}  // namespace attntrace
