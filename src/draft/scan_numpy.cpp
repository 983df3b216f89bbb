// numpy's draws in an article's code, followed as numpy makes them (the
// generators: numpy_generator). After np.random.seed(N), each np.random.rand,
// randn, random, random_sample, uniform, normal and standard_normal draws from
// the legacy generator; after `rng = np.random.default_rng(N)` (or
// np.random.Generator(np.random.PCG64(N))), each rng.random, uniform, normal
// and standard_normal draws from that Generator, several names each its own
// stream. A draw assigned to a name, alone or times or over a constant, is
// kept; one drawn and transformed otherwise is counted. A draw the reader
// cannot count (randint, rng.integers, shuffle, choice, a dtype other than
// float64, the generator passed to a function) ends that stream.
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "draft/scan.hpp"
#include "draft/seeded_code.hpp"

namespace attntrace {

namespace seeded_code {

// numpy Generators followed by name (rng, gen ...): each line is looked at for each (a bounded cost per line).
constexpr std::size_t kMaxNumpyGenerators = 16;
// numpy's draws followed over the article, both generators': a line draws at most 16 K values, a worked example a few
// hundred; past this bound (a hostile notebook of a million draws) the streams end.
constexpr std::size_t kMaxNumpyDraws = std::size_t{1} << 22;

// A draw of numpy's (np.random.rand(4, 4), rng.normal(0, 1, (4, 4))): its distribution, parameters and shape.
struct NumpyDraw {
    bool normal = false;
    double p0 = 0, p1 = 1;  // uniform's low and high, normal's loc and scale
    std::size_t rows = 1, cols = 1;
};

// The draw `call(items)` makes: the legacy generator's rand(a, b) and randn(a, b) take the sides; random (the legacy
// random_sample), uniform, normal and standard_normal a size (a tuple) after their parameters, positional or by keyword.
// None when the call draws otherwise (randint, integers, choice, shuffle ...) or with arguments not read (a dtype other
// than float64, out=, a parameter not a number): its stream ends there.
std::optional<NumpyDraw> numpy_draw(const std::string& call, const std::vector<std::string>& items, const Env& env, bool generator) {
    NumpyDraw d;
    std::vector<std::string> dims_s;
    if (!generator && (call == "rand" || call == "randn")) {
        d.normal = call == "randn";
        dims_s = items;
    } else if (call == "random" || call == "uniform" || call == "normal" || call == "standard_normal" || (!generator && call == "random_sample")) {
        d.normal = call == "normal" || call == "standard_normal";
        std::vector<std::string_view> params;
        if (call == "uniform") params = {"low", "high"};
        if (call == "normal") params = {"loc", "scale"};
        for (const std::string& it : items) {
            const std::size_t eq = it.find('=');
            if (eq == std::string::npos) continue;
            const std::string key = trim(std::string_view(it).substr(0, eq)), value = trim(std::string_view(it).substr(eq + 1));
            const bool float64 = value == "np.float64" || value == "numpy.float64" || value == "float" || value == "'float64'" || value == "\"float64\"";
            if (key != "size" && std::find(params.begin(), params.end(), key) == params.end() && !(generator && key == "dtype" && float64))
                return std::nullopt;
        }
        if (positional_count(items) > params.size() + 1) return std::nullopt;
        for (std::size_t k = 0; k < params.size(); ++k) {
            const std::string v = argument(items, k, params[k]);
            const auto x = v.empty() ? std::optional<double>(k == 0 ? 0.0 : 1.0) : eval_number(v);
            if (!x) return std::nullopt;
            (k ? d.p1 : d.p0) = *x;
        }
        std::string size = argument(items, params.size(), "size");
        if (size == "None") size.clear();
        if (!size.empty() && size.front() == '(' && size.back() == ')') size = size.substr(1, size.size() - 2);
        dims_s = top_items(size);
    } else {
        return std::nullopt;
    }
    std::vector<long> dims;
    for (const std::string& s : dims_s) {
        if (trim(s).empty()) continue;
        const auto v = eval_int(s, env);
        if (!v || *v < 1 || *v > kMaxGeneratedSide) return std::nullopt;
        dims.push_back(*v);
    }
    if (dims.size() > 2 || (dims.size() == 2 && dims[0] * dims[1] > kMaxGeneratedSide * 16)) return std::nullopt;
    d.rows = dims.size() == 2 ? static_cast<std::size_t>(dims[0]) : 1;
    d.cols = dims.empty() ? 1 : static_cast<std::size_t>(dims.back());
    return d;
}

// The seed argument of the generator `rhs` makes, np.random.default_rng(ARG) or np.random.Generator(np.random.PCG64(ARG))
// alone ("" for none); none when rhs is not one.
std::optional<std::string> numpy_generator_made(std::string rhs) {
    std::vector<std::string_view> makers = {"np.random.default_rng(", "numpy.random.default_rng(", "default_rng("};
    for (std::string_view g : {"np.random.Generator(", "numpy.random.Generator(", "Generator("})
        if (rhs.starts_with(g) && rhs.ends_with(")")) {
            rhs = trim(std::string_view(rhs).substr(g.size(), rhs.size() - g.size() - 1));
            makers = {"np.random.PCG64(", "numpy.random.PCG64(", "PCG64("};
            break;
        }
    for (std::string_view m : makers)
        if (rhs.starts_with(m)) {
            const auto args = call_args(rhs, m.size() - 1);
            if (!args || m.size() + args->size() + 1 != rhs.size()) return std::nullopt;
            return argument(top_items(*args), 0, "seed");
        }
    return std::nullopt;
}

// The values of `d` drawn from `stream` (numpy's legacy generator or a Generator), `drawn` counting them: none past
// kMaxNumpyDraws, or when a normal is not followed.
template <class Stream>
std::optional<std::vector<double>> draw_numpy(Stream& stream, const NumpyDraw& d, std::size_t& drawn) {
    const std::size_t n = d.rows * d.cols;
    if (drawn + n > kMaxNumpyDraws) return std::nullopt;
    drawn += n;
    std::vector<double> v(n);
    for (double& x : v) {
        x = d.normal ? d.p0 + d.p1 * stream.normal() : d.p0 + (d.p1 - d.p0) * stream.uniform();
        if (!std::isfinite(x)) return std::nullopt;
    }
    return v;
}

// A draw assigned to `name`: kept alone, or times or over a constant (np.random.randn(4, 4) * 0.1, / np.sqrt(d_k)),
// from the text before and after the call; else counted only.
void keep_numpy(const std::string& name, std::vector<double> v, const NumpyDraw& d, const std::string& before, const std::string& after,
                std::string how, const Env& env, const NumpyCode::Add& add) {
    const auto kept = kept_draw(trim(before), trim(after), env);
    if (!kept || name.empty()) return;
    for (double& x : v) x = kept->divide ? x / kept->factor : x * kept->factor;
    add(name, d.rows, d.cols, std::move(v), std::move(how));
}

bool NumpyCode::line(const std::string& name, const std::string& rhs, const std::string& text, const std::function<std::string()>& where,
                     const Env& env, const Add& add) {
    return generator(name, rhs, text, where, env, add) || legacy(name, rhs, where, env, add);
}

// np.random.seed(N) and the draws of numpy's legacy generator.
bool NumpyCode::legacy(const std::string& name, const std::string& rhs, const std::function<std::string()>& where, const Env& env, const Add& add) {
    const std::size_t at = std::min(rhs.find("np.random."), rhs.find("numpy.random."));
    if (at == std::string::npos) return false;
    const std::size_t fn = rhs.find('.', rhs.find("random.", at)) + 1;
    std::size_t open = fn;
    while (open < rhs.size() && ident_char(rhs[open])) ++open;
    const std::string call = rhs.substr(fn, open - fn);
    const auto args = open < rhs.size() && rhs[open] == '(' ? call_args(rhs, open) : std::nullopt;
    if (!args) return legacy_.reset(), true;
    const std::vector<std::string> items = top_items(*args);
    if (call == "seed") {
        const auto seed = items.size() == 1 ? eval_int(items[0], env) : std::nullopt;
        if (seed && *seed >= 0 && *seed <= 0xffffffffL) legacy_.emplace(static_cast<std::uint32_t>(*seed));
        else legacy_.reset();
        legacy_where_ = where();
        return true;
    }
    if (!legacy_) return true;
    const std::size_t close = open + 2 + args->size();
    const auto d = numpy_draw(call, items, env, false);  // randint, choice, permutation, shuffle...: not followed
    if (!d || rhs.find("random.", close) != std::string::npos) return legacy_.reset(), true;  // (a second draw on the line too)
    auto v = draw_numpy(*legacy_, *d, drawn_);
    if (!v) return legacy_.reset(), true;
    keep_numpy(name, std::move(*v), *d, rhs.substr(0, at), rhs.substr(close), fmt::format("np.random.seed at {}, then {}", legacy_where_, trim(rhs)), env,
               add);
    return true;
}

// `name = np.random.default_rng(N)` (or np.random.Generator(np.random.PCG64(N))) and the draws on the generator it names.
// Any other use of the name (rng.integers(...), shuffle(x, rng), a dtype other than float64, two draws on one line, the
// name given another value) ends its stream.
bool NumpyCode::generator(const std::string& name, const std::string& rhs, const std::string& text, const std::function<std::string()>& where,
                          const Env& env, const Add& add) {
    if (const auto arg = numpy_generator_made(rhs)) {
        if (!is_identifier(name) || (!generators_.count(name) && generators_.size() >= kMaxNumpyGenerators)) return true;
        Generator& g = generators_[name];
        g.stream.reset();
        // the seed: an integer, written or a name given one; default_rng() takes the system's entropy
        const std::string a = trim(*arg);
        std::uint64_t seed = 0;
        if (!a.empty() && a.find_first_not_of("0123456789") == std::string::npos) {
            if (std::from_chars(a.data(), a.data() + a.size(), seed).ec != std::errc{}) return true;
        } else if (const auto v = eval_int(a, env); v && *v >= 0) {
            seed = static_cast<std::uint64_t>(*v);
        } else {
            return true;
        }
        g.stream.emplace(seed);
        g.how = fmt::format("{} = {} at {}", name, rhs, where());
        return true;
    }
    if (const auto it = generators_.find(name); it != generators_.end()) it->second.stream.reset();  // the name given another value
    // a generator made otherwise (default_rng(0).random(3), Generator(bits), Philox(1)): not followed, nor is it the legacy one
    for (std::string_view other : {"default_rng(", "Generator(", "PCG64", "SeedSequence(", "Philox(", "SFC64(", "MT19937("})
        if (rhs.find(other) != std::string::npos) return true;
    bool drew = false;
    for (auto& [gen, g] : generators_) {
        std::size_t mentions = 0;  // as a whole name (not self.rng, not rng2)
        for (std::size_t at = text.find(gen); at != std::string::npos; at = text.find(gen, at + 1))
            mentions += (at == 0 || (!ident_char(text[at - 1]) && text[at - 1] != '.')) &&
                        (at + gen.size() == text.size() || !ident_char(text[at + gen.size()]));
        if (mentions == 0) continue;
        // one draw on the line, gen.METHOD(...), as the line's only mention of the generator
        const std::size_t at = find_call(rhs, gen + ".");
        std::size_t open = at == std::string::npos ? rhs.size() : at + gen.size() + 1;
        while (open < rhs.size() && ident_char(rhs[open])) ++open;
        const auto args = open < rhs.size() && rhs[open] == '(' ? call_args(rhs, open) : std::nullopt;
        const auto d = args && mentions == 1 && g.stream
                           ? numpy_draw(rhs.substr(at + gen.size() + 1, open - at - gen.size() - 1), top_items(*args), env, true)
                           : std::nullopt;
        auto v = d ? draw_numpy(*g.stream, *d, drawn_) : std::nullopt;
        if (!v) {
            g.stream.reset();
            continue;
        }
        keep_numpy(name, std::move(*v), *d, rhs.substr(0, at), rhs.substr(open + 2 + args->size()), fmt::format("{}, then {}", g.how, rhs), env, add);
        drew = true;
    }
    return drew;
}

void NumpyCode::end_all() {
    legacy_.reset();
    for (auto& [gen, g] : generators_) g.stream.reset();
}

void NumpyCode::unfollowed(const std::string& text) {
    if (text.find("np.random.") != std::string::npos || text.find("numpy.random.") != std::string::npos) legacy_.reset();
    for (auto& [gen, g] : generators_)
        if (text.find(gen) != std::string::npos) g.stream.reset();
}

}  // namespace seeded_code

}  // namespace attntrace
