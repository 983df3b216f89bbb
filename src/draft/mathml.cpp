#include "draft/mathml.hpp"

#include <cctype>

namespace attntrace {

namespace {

// The most of a <math> looked into for its TeX source: a formula's MathML is a few KB.
constexpr std::size_t kMaxMathBytes = 1 << 16;

std::size_t find_lower(std::string_view s, std::string_view word, std::size_t from, std::size_t until) {
    for (std::size_t i = from; i + word.size() <= until; ++i) {
        bool same = true;
        for (std::size_t k = 0; k < word.size() && same; ++k)
            same = std::tolower(static_cast<unsigned char>(s[i + k])) == word[k];
        if (same) return i;
    }
    return std::string_view::npos;
}

}  // namespace

std::optional<MathTex> math_tex_source(std::string_view s, std::size_t from) {
    const std::size_t until = std::min(s.size(), from + kMaxMathBytes);
    const std::size_t close = find_lower(s, "</math", from, until);
    if (close == std::string_view::npos) return std::nullopt;
    const std::size_t annotation = find_lower(s, "<annotation", from, close);
    if (annotation == std::string_view::npos) return std::nullopt;
    const std::size_t open_end = s.find('>', annotation);
    if (open_end == std::string_view::npos || open_end > close) return std::nullopt;
    if (find_lower(s, "x-tex", annotation, open_end) == std::string_view::npos) return std::nullopt;
    const std::size_t body_end = find_lower(s, "</annotation", open_end, close);
    if (body_end == std::string_view::npos) return std::nullopt;
    const std::size_t end = s.find('>', close);
    return MathTex{std::string(s.substr(open_end + 1, body_end - open_end - 1)), end == std::string_view::npos ? s.size() : end + 1};
}

std::string MathMlText::tag(const std::string& name, bool closing, bool empty) {
    std::string out;
    if (!closing) {
        if (name == "math") out += " \\[ ";
        if (name == "mtable") {
            out += " \\begin{bmatrix} ";
            row_cells_.push_back(0);
            table_rows_.push_back(0);
        }
        if (name == "mtr" && !table_rows_.empty()) {
            if (table_rows_.back()++ > 0) out += " \\\\ ";
            row_cells_.back() = 0;
        }
        if (name == "mtd" && !row_cells_.empty() && row_cells_.back()++ > 0) out += " & ";
        // tokens apart ("X", "=", "0.5"), but not inside a script: W^{Q}, not W ^{ Q}
        if ((name == "mi" || name == "mn" || name == "mo" || name == "mtext") && scripts_.empty()) out += ' ';
        const bool script = (name == "msup" || name == "msub") && !empty;
        if (!empty) ++depth_;
        if (script) scripts_.push_back({depth_, name == "msub", 0});
        return out;
    }
    if (depth_ > 0) --depth_;
    // a script's own end (its depth one below its children's), or one of its children's
    if (!scripts_.empty() && (name == "msup" || name == "msub") && depth_ + 1 == scripts_.back().depth) {
        scripts_.pop_back();
    } else if (!scripts_.empty() && depth_ == scripts_.back().depth && ++scripts_.back().closed == 1) {
        out += scripts_.back().sub ? '_' : '^';
    }
    if (name == "mtable") {
        out += " \\end{bmatrix} ";
        if (!row_cells_.empty()) row_cells_.pop_back(), table_rows_.pop_back();
    }
    if (name == "math") {
        out += " \\] ";
        depth_ = 0;
        row_cells_.clear();
        table_rows_.clear();
        scripts_.clear();
    }
    return out;
}

}  // namespace attntrace
