// Tables of words for the terminal (steps, draft's claims, diff, cost, bench):
// columns as wide as their widest cell and, when a row is wider than the
// width (80 in a pipe), the table folded to fit rather than cut.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attntrace {

struct TextColumn {
    TextColumn(std::string header_, bool right_ = false, bool folds_ = false, std::string fold_label_ = {})
        : header(std::move(header_)), right(right_), folds(folds_), fold_label(std::move(fold_label_)) {}
    std::string header;  // "" for every column: no header line
    bool right = false;  // numbers: aligned right
    // A column that may leave the table when its rows are too wide: its cells
    // are then written under their row as "label value" items.
    bool folds = false;
    std::string fold_label;  // the item's label when folded ("max |a-b| at"); "" for the value alone
};

// The last column wraps under itself when at least this many columns are left for it,
// and, in a table that may fold instead, when none of its cells then takes more lines than this.
inline constexpr std::size_t kLeastLastColumn = 16;
inline constexpr std::size_t kMostWrappedLines = 2;

// `rows` (each as many cells as `columns`) under the columns' headers, each
// line beginning with `indent`, columns `gap` spaces apart, the last one not
// padded. When a line would be wider than `width` (0: no limit):
//   1. the last column's cells wrap at spaces under that column, when it
//      keeps kLeastLastColumn columns and its longest word fits there (and,
//      when columns may fold, no cell takes more than kMostWrappedLines);
//   2. else the columns that fold leave the table: under each row its
//      folded cells ("at [1,1,3]", "a 1.449551"), the empty ones left out,
//      follow 4 columns further in, joined by ", ", lines broken only
//      between items; then 1. again for what is left.
// A cell is never split within a word: a number stays whole.
std::string format_text_table(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                              std::size_t width, std::string_view indent = "", std::size_t gap = 2);

// Whether `format_text_table` keeps every column on the row's line at `width`.
bool table_fits(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                std::size_t width, std::string_view indent = "", std::size_t gap = 2);

}  // namespace attntrace
