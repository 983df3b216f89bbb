// MathML as the draft reads it: a page's <math> elements (native MathML, the
// assistive copy MathJax 3 renders beside its glyphs, KaTeX's copy) turned
// into the LaTeX the scanners read. A <math> that carries its TeX source
// (<annotation encoding="application/x-tex">, as KaTeX writes it) is read from
// that source alone; any other is read from its elements: a <mtable> as a
// bmatrix, its rows and cells as \\ and &, its tokens apart, a superscript or
// subscript as ^ or _ between its two parts (W^Q, x_1).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attntrace {

// The TeX source of the <math> element whose body starts at s[from] (just past its open tag), and where the
// element ends (past "</math>"); none when it carries none, or has no end.
struct MathTex {
    std::string tex;
    std::size_t end = 0;
};
std::optional<MathTex> math_tex_source(std::string_view s, std::size_t from);

// The text a MathML element's tag stands for, fed each tag inside a <math> in order (the <math> tags too).
class MathMlText {
public:
    // `name` lowercased, `closing` for </name>, `empty` for <name/>. Returns what to append to the line.
    std::string tag(const std::string& name, bool closing, bool empty);
    bool inside() const { return depth_ > 0; }

private:
    struct Script {
        std::size_t depth = 0;   // its own depth: its children close back to it
        bool sub = false;
        std::size_t closed = 0;  // children closed so far
    };
    std::size_t depth_ = 0;                  // elements open inside <math>, <math> itself the first
    std::vector<std::size_t> row_cells_;     // per open <mtable>: cells so far in its current row
    std::vector<std::size_t> table_rows_;    // per open <mtable>: rows so far
    std::vector<Script> scripts_;
};

}  // namespace attntrace
