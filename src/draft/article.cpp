#include "draft/article.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "draft/article_text.hpp"
#include "draft/scan.hpp"
#include "io/read_file.hpp"

namespace attntrace {

std::string article_format(const std::string& path, std::string_view content) {
    std::string ext = std::filesystem::path(path).extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".md" || ext == ".markdown") return "markdown";
    if (ext == ".html" || ext == ".htm") return "html";
    if (ext == ".ipynb") return "notebook";
    if (ext == ".tex") return "latex";
    // by its first bytes: a notebook's JSON, a page's markup
    std::size_t i = 0;
    if (content.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < content.size() && std::isspace(static_cast<unsigned char>(content[i]))) ++i;
    const std::string_view head = content.substr(i, 512);
    if (!head.empty() && head[0] == '{' && head.find("\"cells\"") != std::string_view::npos) return "notebook";
    std::string lower(head);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("<!doctype html", 0) == 0 || lower.rfind("<html", 0) == 0 || lower.find("<body") != std::string::npos) return "html";
    return "text";
}

namespace {

// Weighted vectors a line each ("0.07 * [1, 1, 3] = [..]" on consecutive lines, their factors and the weights
// in prose between them) are the rows of one array: the terms of one weighted sum, one per key.
void merge_weighted(std::vector<PrintedArray>& arrays) {
    std::vector<PrintedArray> out;
    std::size_t last = static_cast<std::size_t>(-1);  // the weighted array being grown, in out
    for (PrintedArray& a : arrays) {
        if (a.weighted && last != static_cast<std::size_t>(-1)) {
            PrintedArray& g = out[last];
            const std::size_t line = g.place.line + g.rows.size();
            if (g.place.cell == a.place.cell && a.place.line == line && a.rows[0].size() == g.rows[0].size()) {
                g.rows.push_back(a.rows[0]);
                g.shape = {g.rows.size(), g.rows[0].size()};
                continue;
            }
        }
        if (a.weighted) last = out.size();
        else if (!a.operand && a.form != PrintedForm::prose) last = static_cast<std::size_t>(-1);
        out.push_back(std::move(a));
    }
    arrays = std::move(out);
}

// A batch printed as three levels of brackets whose sequences are the same numbers (torch.stack((x, x)), as
// tutorials show batching): one sequence, the first, read as the array (its rows a token's each). A batch of
// different sequences, or heads, stays as printed.
void collapse_copied_batches(std::vector<PrintedArray>& arrays) {
    for (PrintedArray& a : arrays) {
        if (a.shape.size() != 3 || a.shape[0] < 2 || a.elided || a.rows.size() != a.shape[0] * a.shape[1]) continue;
        const std::size_t per = a.shape[1];
        bool same = true;
        for (std::size_t b = 1; b < a.shape[0] && same; ++b)
            for (std::size_t r = 0; r < per && same; ++r) same = a.rows[b * per + r] == a.rows[r];
        if (!same) continue;
        a.rows.resize(per);
        a.shape = {a.shape[1], a.shape[2]};
    }
}

// A notebook cell's printed arrays named, in order, by its print() calls, when they are as many (a print of
// a shape aside): print(y); print(y.shape) names its one array y, not by the cell's last statement.
void name_printed_outputs(std::vector<PrintedArray>& arrays, const ArticleText& text) {
    std::map<int, std::vector<std::string>> prints;  // cell -> names, in order
    const std::string& t = text.text();
    for (std::size_t b = 0; b < t.size();) {
        const std::size_t e = std::min(t.find('\n', b), t.size());
        const ArticlePlace& place = text.place_of(b);
        std::string_view line(t.data() + b, e - b);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        if (place.cell >= 0 && !place.output && line.substr(0, 6) == "print(") {
            const std::size_t close = line.rfind(')');
            // a print of a shape prints no array (its torch.Size is read as a shape): not counted
            const std::string_view arg = close != std::string_view::npos && close > 6 ? line.substr(6, close - 6) : std::string_view{};
            const bool shape = arg.ends_with(".shape") || arg.ends_with(".size()") || arg.ends_with(".dim()");
            if (!arg.empty() && !shape) prints[place.cell].push_back(print_argument_name(arg));
        }
        b = e + 1;
    }
    std::map<int, std::vector<PrintedArray*>> outputs;
    for (PrintedArray& a : arrays)
        if (a.place.cell >= 0 && a.place.output && a.form != PrintedForm::prose) outputs[a.place.cell].push_back(&a);
    for (auto& [cell, out] : outputs) {
        const auto it = prints.find(cell);
        if (it == prints.end() || it->second.size() != out.size()) continue;
        for (std::size_t k = 0; k < out.size(); ++k)
            if (!it->second[k].empty()) out[k]->name = it->second[k];
    }
}

// Per-head weights printed apart (W_1^Q, W_2^Q, ... or W^Q_1, W_Q^{(2)}): a name that is W and the role's
// letter once one run of digits (the head's number) is taken out. Returns the role (0, 1, 2) and the number.
std::optional<std::pair<int, long>> head_weight(const std::string& name) {
    std::string letters, digits;
    bool ended = false;  // the digits are one run
    for (char c : name) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            if (ended) return std::nullopt;
            digits += c;
        } else if (std::isalpha(static_cast<unsigned char>(c))) {
            letters += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            ended = ended || !digits.empty();
        } else {
            ended = ended || !digits.empty();
        }
    }
    if (digits.empty() || digits.size() > 2 || letters.size() != 2 || letters[0] != 'W') return std::nullopt;
    const int role = letters[1] == 'Q' ? 0 : letters[1] == 'K' ? 1 : letters[1] == 'V' ? 2 : -1;
    if (role < 0) return std::nullopt;
    return std::pair<int, long>{role, std::stol(digits)};
}

// Per-head weights printed apart, heads numbered 1 ... H (or 0 ... H - 1), H >= 2, one shape per role and
// each role's H heads: each role's heads joined side by side into one array (x·W's columns, or rows when
// printed d_k x d_model, fewer rows than columns, as nn.Linear keeps them), as the concatenated heads use
// them, placed where its first head was printed. The heads' own arrays are kept, marked `joined`.
void join_head_weights(std::vector<PrintedArray>& arrays) {
    constexpr std::size_t kMaxJoined = 16;  // heads printed apart by a worked example: a few
    std::map<long, std::size_t> by_head[3];  // each role's first array of each head's number
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        const PrintedArray& a = arrays[i];
        if (a.form == PrintedForm::prose || a.rows.size() < 1 || a.elided || a.operand) continue;
        if (const auto hw = head_weight(a.name); hw && by_head[hw->first].size() < kMaxJoined) by_head[hw->first].emplace(hw->second, i);
    }
    const std::size_t H = by_head[0].size();
    if (H < 2 || by_head[1].size() != H || by_head[2].size() != H) return;
    std::vector<std::pair<std::size_t, PrintedArray>> joined;  // (before which array, the joined array)
    for (int r = 0; r < 3; ++r) {
        const long from = by_head[r].begin()->first;
        if ((from != 0 && from != 1) || by_head[r].rbegin()->first != from + static_cast<long>(H) - 1) return;
        const PrintedArray& first = arrays[by_head[r].begin()->second];
        for (const auto& [h, i] : by_head[r])
            if (arrays[i].rows.size() != first.rows.size() ||
                std::any_of(arrays[i].rows.begin(), arrays[i].rows.end(), [&](const auto& row) { return row.size() != first.rows[0].size(); }))
                return;
        const bool by_rows = first.rows.size() < first.rows[0].size();
        PrintedArray j = first;
        j.rows.clear();
        for (const auto& [h, i] : by_head[r]) {
            const auto& rows = arrays[i].rows;
            if (by_rows) {
                j.rows.insert(j.rows.end(), rows.begin(), rows.end());
            } else {
                if (j.rows.empty()) j.rows.resize(rows.size());
                for (std::size_t k = 0; k < rows.size(); ++k) j.rows[k].insert(j.rows[k].end(), rows[k].begin(), rows[k].end());
            }
        }
        j.shape = {j.rows.size(), j.rows[0].size()};
        j.name = std::string("W^") + "QKV"[r];
        j.row_labels.clear();
        j.col_labels.clear();
        j.joined_heads = H;
        j.quote = fmt::format("{} heads' {} printed apart, side by side (the first at {})", H, j.name, first.place.describe());
        joined.emplace_back(by_head[r].begin()->second, std::move(j));
    }
    for (int r = 0; r < 3; ++r)
        for (const auto& [h, i] : by_head[r]) arrays[i].joined = true;
    std::sort(joined.begin(), joined.end(), [](const auto& a, const auto& b) { return a.first > b.first; });  // from the back
    for (auto& [at, j] : joined) arrays.insert(arrays.begin() + static_cast<std::ptrdiff_t>(at), std::move(j));
}

}  // namespace

Article read_article_text(std::string_view content, const std::string& file, const std::string& format) {
    Article out;
    out.file = file;
    out.format = format;
    const ArticleText text = article_text(content, format, file);
    Scan scan(text, file);
    out.shapes = scan_shapes(scan);
    out.sizes = scan_sizes(text);
    scan_bars(scan);
    scan_masks(scan);
    scan_mask_rows(scan);
    scan_mask_code(scan, out.sizes);
    scan_latex(scan);
    scan_vector_tables(scan);
    scan_brackets(scan);
    scan_tables(scan);
    scan_seeded(scan);
    scan_prose(scan);
    out.arrays = std::move(scan).arrays();
    merge_weighted(out.arrays);
    collapse_copied_batches(out.arrays);
    join_head_weights(out.arrays);
    if (format == "notebook") name_printed_outputs(out.arrays, text);
    read_mask_numbers(out.arrays);
    out.tokens = scan_tokens(text);
    out.settings = scan_settings(text);
    return out;
}

long Article::setting(const std::string& name) const {
    for (const auto& s : settings)
        if (s.name == name) return s.value;
    return 0;
}

Article read_article(const std::string& path) {
    const std::string content = read_small_file(path, kMaxArticleBytes, "an article (Markdown, HTML, a notebook, LaTeX or text)");
    return read_article_text(content, path, article_format(path, content));
}

}  // namespace attntrace
