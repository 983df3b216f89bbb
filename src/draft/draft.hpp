// A lesson drafted from an article's printed numbers (`attntrace draft`).
//
// The search, deterministic and offline: the tokens are the word list most
// of the article's arrays have a row for; X the first array with a row per
// token (one named X or an embedding first); the weights the d_model-row
// arrays named W^Q, W^K, W^V (else the first three). Then every convention
// of the grid (scaling on or off, no mask or a causal one, the weights as
// printed or transposed) is run, and each remaining printed array placed by
// value (place.hpp); the convention whose run agrees with the most printed
// numbers wins. From there, a printed step that its formula does not give is
// tried as `given` (the article's own chain), and a rounding of the weights
// at their printed decimals as `document_rounding`; each is kept when more
// printed numbers agree. Every placed array becomes a claim with the verdict
// the check gives it; what could not be placed is listed with the nearest
// step and how far it is.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_field.hpp"
#include "draft/printed.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// One convention of the grid and how many printed numbers its run agreed with.
struct DraftTrial {
    std::string conventions;  // "scale on, mask none, weights as printed"
    std::size_t agree = 0, total = 0;
};

// An array the draft could not place: where it is, the nearest selection and how far.
struct DraftUnplaced {
    std::string where, quote, nearest;
    std::size_t agree = 0, total = 0;
    double max_error = 0;
};

struct Draft {
    OrderedJson lesson;                   // the lesson document (attntrace-lesson, version 1), its keys in a lesson's order
    std::vector<std::string> reasons;     // why each array was read as an input, a weight or a claim
    std::vector<DraftTrial> trials;       // the conventions tried, in the grid's order
    std::vector<DraftUnplaced> unplaced;  // also in lesson["unplaced"]
    bool complete = false;                // inputs and weights found: the lesson runs
    std::string start;                    // what the run starts from ("the printed Q, K and V")
};

// A lesson per worked example, in the order of the text. Throws InputError
// naming the article when it prints nothing a lesson can start from.
std::vector<Draft> draft_lessons(const Article& article);
// The first of them.
Draft draft_lesson(const Article& article);

}  // namespace attntrace
