#include "draft/article.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

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

Article read_article_text(std::string_view content, const std::string& file, const std::string& format) {
    Article out;
    out.file = file;
    out.format = format;
    const ArticleText text = article_text(content, format, file);
    Scan scan(text, file);
    out.shapes = scan_shapes(scan);
    out.sizes = scan_sizes(text);
    scan_masks(scan);
    scan_mask_rows(scan);
    scan_mask_code(scan, out.sizes);
    scan_latex(scan);
    scan_brackets(scan);
    scan_tables(scan);
    scan_prose(scan);
    out.arrays = std::move(scan).arrays();
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
