// Where a printed array stands in a run: the step and the selection (a whole
// step or one head of it, a row, a column, a cell) whose values it prints,
// found by value. For each array every step of the trace whose shape can
// hold it is tried; the array's numbers are compared at the decimals each
// was printed with (core/decimal.hpp's agrees_at_precision), and the
// selection that agrees on the most numbers wins, the earliest step on a tie
// (the scaled scores before the masked scores that equal them without a mask).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_field.hpp"
#include "draft/printed.hpp"

namespace attntrace {

struct Trace;

struct Placement {
    std::string step;         // "" when nothing holds the array's shape
    json at = json::object(); // a claim's `at`: {}, {"head": 1}, {"query": 2}, {"query": 2, "key": 0}
    std::size_t agree = 0;    // numbers that agree at their printed decimals
    std::size_t total = 0;    // numbers compared
    double max_error = 0;     // the largest |computed - printed|
    std::vector<double> computed;  // the selection's values, row-major, as the array prints them
    std::string row_axis, col_axis;  // the selection's axes ("query", "key"; "" where it has none)
    std::string of;                // "terms": a row of Z's weighted value vectors (a.weighted); "row_sum": a selection's row sums;
                                   // "head_mean": the heads' patterns averaged (nn.MultiheadAttention's weights); else ""
    bool transposed = false;       // printed transposed (Kᵀ: a key per column): rows along col_axis, columns along row_axis
    std::size_t whole_steps = 0;   // the steps with a selection every number of the array agrees with (1: the step is unambiguous)
    bool whole() const { return total > 0 && agree == total; }
};

// How far each cell of a step may move with the rounding of the inputs an article printed (a bound of
// the first order: the sum over the printed input values of each one's own effect, moved by half its
// last digit), by step name, row-major as the step holds it. A number that differs from the run by no
// more than its own half unit and this agrees in a placement (the article computed with more digits
// than it printed; the check then looks for a witness, docs/lesson-format.md, Inputs printed rounded).
using Slack = std::map<std::string, std::vector<float>>;

// The best placement of `a` in `trace` (every step recorded in full), or one
// with an empty step when no selection has its shape. Prose numbers (1 x 1)
// are placed on single cells only; an elided array is placed on nothing.
// With `only`, the steps whose names end with it ("hook_pattern"); with `slack`, each
// number agrees within its step's slack too.
Placement place_array(const PrintedArray& a, const Trace& trace, const std::string& only = "", const Slack* slack = nullptr);

// The last part of the step an article's usual name for an array points to
// ("Q": "hook_q", "\tilde{S}": "hook_scores_scaled", "A": "hook_pattern"); "" when the name says nothing.
std::string step_hint(const std::string& name);

// What a name written in words says an array is, for the names the letters' rules do not read:
// "Weights for query", "query weights", "W_query" -> "W_Q" (and W_K, W_V); "Input 1", "embeddings" -> "X";
// "Key for Input" -> "K" (Q, V); "scores" -> "S", "scaled scores" -> "tildeS"; "attention weights",
// "softmax" -> "A"; "output", "context" -> "Z"; "" for anything else ("weighted values", "Q", "x_ring").
std::string word_role(const std::string& name);

}  // namespace attntrace
