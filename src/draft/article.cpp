#include "draft/article.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

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
