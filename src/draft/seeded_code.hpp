// What the readers of an article's seeded code share (scan_seeded.cpp, which
// follows torch's generator and the modules, and scan_numpy.cpp, numpy's two
// generators): reading a line's names, integers, calls and the constant a draw
// is scaled by. Internal to src/draft/.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "draft/numpy_generator.hpp"

namespace attntrace {

namespace seeded_code {

// A generated side past this is no worked example's; its stream is not followed further.
constexpr long kMaxGeneratedSide = 1024;

bool ident_char(char c);
bool is_identifier(std::string_view s);

// The position of `call` ("torch.rand(") in `line` as a whole name (not "torch.randn(", not "xtorch.rand("), or npos.
// "nn.Linear(" is also found spelled in full, torch.nn.Linear(.
std::size_t find_call(std::string_view line, std::string_view call);

// What the code does with a draw (kept_draw): times or over `factor`.
struct Kept {
    double factor = 1;
    bool divide = false;
};

// The names the code gives integers and booleans, and the shapes of the arrays printed before.
struct Env {
    std::map<std::string, std::string> values;  // name -> an integer or True/False, as written
    std::function<std::optional<long>(const std::string&, long)> shape;  // NAME.shape[k]
};

// An integer the code writes: a literal, a name given one, NAME.shape[k], or two of them joined by //, *, + or -.
std::optional<long> eval_int(std::string_view e, const Env& env, int depth = 0);
// A number the code writes (0.1, 1e-2, 2), or none.
std::optional<double> eval_number(const std::string& e);

// A keyword argument's value ("bias=False" -> "False"), or "".
std::string keyword(const std::vector<std::string>& items, std::string_view name);
// The call's positional arguments (those with no '=').
std::size_t positional_count(const std::vector<std::string>& items);
// A call's argument as Python binds it: the `index`-th positional one, else the keyword `name`'s value; "" when neither.
std::string argument(const std::vector<std::string>& items, std::size_t index, std::string_view name);

// What the code does with a draw, from the text before and after the call: kept as drawn (alone, or in
// nn.Parameter(...)), or times or over a constant (* 0.1, / np.sqrt(d_k), / math.sqrt(8)); else none (the
// draw is counted, not kept). `factor` is 1 for a draw kept as drawn; `divide` says which way.
std::optional<Kept> kept_draw(const std::string& before, const std::string& after, const Env& env);

// numpy's draws in the code (scan_numpy.cpp): after np.random.seed(N), the legacy generator's; after
// `rng = np.random.default_rng(N)`, the draws on each Generator so named. Each line at the top level is given
// to line(); a draw kept goes to `add`.
class NumpyCode {
public:
    // A kept draw: the array `name` of rows x cols values, row-major, and how the code drew it.
    using Add = std::function<void(const std::string& name, std::size_t rows, std::size_t cols, std::vector<double> values, std::string how)>;

    // `name = rhs` (name "" when the line assigns nothing), `text` the whole line, `where` its place in the article:
    // true when the line was numpy's (a seed, a generator made, a draw).
    bool line(const std::string& name, const std::string& rhs, const std::string& text, const std::function<std::string()>& where,
              const Env& env, const Add& add);
    // A line whose draws are not followed (a tuple assignment's): the streams it draws from end.
    void unfollowed(const std::string& text);
    // Code whose draws are not followed and could draw from any of them (a function's call): every stream ends.
    void end_all();

private:
    bool legacy(const std::string& name, const std::string& rhs, const std::function<std::string()>& where, const Env& env, const Add& add);
    bool generator(const std::string& name, const std::string& rhs, const std::string& text, const std::function<std::string()>& where,
                   const Env& env, const Add& add);

    std::optional<NumpyLegacy> legacy_;  // numpy's legacy generator after np.random.seed, while its draws are counted
    std::string legacy_where_;
    // numpy's Generators by the name the code gives them (rng = np.random.default_rng(0)), each while its draws are counted
    struct Generator {
        std::optional<NumpyPcg64> stream;
        std::string how;  // "rng = np.random.default_rng(0) at line 3"
    };
    std::map<std::string, Generator> generators_;
    std::size_t drawn_ = 0;  // numpy's draws so far, both generators' (kMaxNumpyDraws)
};

}  // namespace seeded_code

}  // namespace attntrace
