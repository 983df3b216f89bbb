// A mask the article prints (a grid of glyphs, words, or 0 and -inf) and the
// config.mask that draws it, found by search like the other conventions: each
// kind the lesson format has (none, causal, a sliding window of w keys,
// causal or centred, global tokens plus a local window, blocks with their
// summary tokens, padding) at every size the tokens allow, the one whose mask
// agrees with the most printed cells winning. The words around the grid are
// hints: the kinds they name ("causal", "look-ahead", "window", "global",
// "block", "pad") are tried first, so that they win a tie.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "draft/chain.hpp"
#include "draft/place.hpp"
#include "draft/printed.hpp"
#include "draft/start.hpp"

namespace attntrace {

struct Trace;

// Every number 0 or -inf (or a huge negative, as code writes -1e9), at least two columns: a mask's M.
bool prints_mask(const PrintedArray& a);

// The query each row of `a` is, by its label: the k-th row labelled "G" is the k-th token "G". Empty when
// a label names no token (or the rows are not labelled).
std::vector<std::size_t> rows_by_label(const PrintedArray& a, const std::vector<std::string>& tokens);

// The kinds the words around `a` name, in the order tried first ("causal", "window", "global_local",
// "block_sparse", "padding"), each with the word that names it.
std::vector<std::pair<std::string, std::string>> mask_hints(const PrintedArray& a);

// A sentence's row of the mask (scan_mask_rows): one row, its token the row label, its keys the column labels.
bool keyed_row(const PrintedArray& a);

// The tokens a sentence's row counts over: the nearest list before it (a quoted list, or a printed list of
// integers, "Sequence: [1, 2, ..., 8]") naming its token and every key it names; its array (or npos) in `array`.
std::vector<std::string> row_tokens(const Article& art, const PrintedArray& a, std::size_t& array, std::string& from);

// The sentence's row over every token: the keys it names as it says, every other key blocked; none when a key
// it names is no token.
std::optional<PrintedArray> expand_row(const PrintedArray& a, const std::vector<std::string>& tokens);

// The window size the text states before `a` ("Window size: 3", "window_size = 3"), within a passage of it; 0 when none.
std::size_t stated_window(const Article& art, const PrintedArray& a);

// The conventions tried for a printed mask of `s` (kind mask): every config.mask its tokens allow.
std::vector<Conventions> mask_conventions(const Article& art, const Start& s);

// A printed mask against a lesson's mask: whole, or a row per label (a drawing of a few queries' rows).
Scored score_mask(const OrderedJson& lesson, const PrintedArray& a);

// The kind of the first mask drawn among the numbers of the example that starts at `s` (over its tokens), when
// one other than none and causal draws it best: tried beside them there (start.cpp's conventions_for).
std::optional<Conventions> drawn_mask(const Article& art, const Start& s);

// `a` placed on the mask, a row per label (rows_by_label): each row's placement at {"query": i}.
std::vector<Placement> place_mask_rows(const PrintedArray& a, const Trace& trace, const std::vector<std::size_t>& rows);

}  // namespace attntrace
