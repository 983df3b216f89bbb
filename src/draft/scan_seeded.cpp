// Weights the code generates from a seed instead of printing them: after
// torch.manual_seed(N), each torch.rand(...) (in nn.Parameter too) and each
// nn.Linear(...) draws from PyTorch's generator in the order the code runs,
// at the top level or in the __init__ of a module the code then builds; after
// np.random.seed(N) or rng = np.random.default_rng(N), numpy's draws
// (scan_numpy.cpp). A torch.randn(...) is kept times or over a constant when
// the code scales it. An nn.Embedding's table is drawn as
// torch.randn draws it, and `x = embed(ids)` gives the rows the ids pick (the
// ids written or printed, else x's printed rows matched to the table). A list
// of heads (nn.ModuleList([Head(..) for _ in range(n)])) gives each weight of
// its heads side by side, as the concatenated heads use them; an
// nn.MultiheadAttention its in_proj's three blocks and its out_proj. Each
// becomes an array of form `code` whose values are the library's and whose
// `generated` says how. A draw the reader cannot count (torch.randint,
// np.random.randint, nn.init, a module it does not know) ends that seed's
// stream: nothing after it is generated. An array drawn and then transformed
// otherwise is counted, not kept.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>

#include "draft/scan.hpp"
#include "draft/seeded_code.hpp"
#include "lesson/generate.hpp"

namespace attntrace {

// This file's own names (the unity build puts several files in one translation unit).
namespace seeded_code {

// A line of code longer than this is not read: generating code is short lines.
constexpr std::size_t kMaxCodeLine = 300;
// An nn.Embedding's table past this many values is not followed (a vocabulary of 50257 x 16 is; GPT-2's is not).
constexpr std::uint64_t kMaxEmbeddingValues = std::uint64_t{1} << 20;
// The generated values kept over the whole article (each a PrintedNumber, 16 bytes): past them, draws are
// counted and not kept, so that a hostile notebook's draws cost a bounded memory (the stream itself is
// bounded by kMaxTorchOffset draws).
constexpr std::size_t kMaxKeptValues = std::size_t{1} << 22;
// The lookups of an embedding's rows followed per article: each looks through the arrays found (a bounded cost).
constexpr std::size_t kMaxLookups = 64;
// A list of heads longer than this is not a worked example's.
constexpr long kMaxHeads = 64;
// A module's __init__ with more draws than this is not a worked example's.
constexpr std::size_t kMaxModuleDraws = 16;
// Modules the code defines that are followed: each line is looked at for each (a bounded cost per line).
constexpr std::size_t kMaxModules = 32;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!ident_char(c)) return false;
    return true;
}

// The position of `call` ("torch.rand(") in `line` as a whole name (not "torch.randn(", not "xtorch.rand("), or npos.
// "nn.Linear(" is also found spelled in full, torch.nn.Linear(.
std::size_t find_call(std::string_view line, std::string_view call) {
    for (std::size_t at = line.find(call); at != std::string_view::npos; at = line.find(call, at + 1)) {
        if (at == 0 || (!ident_char(line[at - 1]) && line[at - 1] != '.')) return at;
        if (call.substr(0, 3) == "nn." && at >= 6 && line.substr(at - 6, 6) == "torch." && (at == 6 || !ident_char(line[at - 7]))) return at;
    }
    return std::string_view::npos;
}

// One draw statement of a module's __init__: `self.attr = nn.Linear(...)`, `... torch.rand(...)` or
// `... torch.randn(...) * c`.
struct Draw {
    enum class Kind { linear, rand, randn, embedding, heads } kind = Kind::linear;
    std::string attr;
    std::vector<std::string> args;   // as written
    Kept kept;                        // randn: its constant
    std::string module, count;       // heads: the module built `count` times (nn.ModuleList([Head(..) for _ in range(count)]))
};

// An nn.Embedding's table as drawn, row-major, and the code that drew it.
struct Table {
    std::size_t rows = 0, cols = 0;
    std::vector<float> values;
    std::uint64_t seed = 0, offset = 0;
    std::string how;
};

struct Module {
    std::vector<std::string> params;               // __init__'s, without self
    std::map<std::string, std::string> defaults;   // param -> its default, as written
    std::vector<Draw> draws;
    bool unknown = false;                          // draws the reader cannot count
};

// An integer literal of more digits than this is no size or seed a worked example writes (a seed of 2^32 has 10).
constexpr std::size_t kMaxIntDigits = 12;

std::optional<long> eval_atom(std::string_view a, const Env& env, int depth) {
    const std::string t = trim(a);
    if (t.empty() || depth > 4) return std::nullopt;
    if (std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return t.size() <= kMaxIntDigits ? std::optional<long>(std::stol(t)) : std::nullopt;
    if (is_identifier(t)) {
        const auto it = env.values.find(t);
        return it == env.values.end() ? std::nullopt : eval_int(it->second, env, depth + 1);
    }
    // NAME.shape[k], NAME.shape[-1]
    const std::size_t dot = t.find(".shape[");
    if (dot != std::string::npos && t.back() == ']' && is_identifier(t.substr(0, dot)) && env.shape) {
        const std::string k = t.substr(dot + 7, t.size() - dot - 8);
        long index = 0;
        try {
            index = std::stol(k);
        } catch (...) {
            return std::nullopt;
        }
        return env.shape(t.substr(0, dot), index);
    }
    return std::nullopt;
}

// An integer the code writes: a literal, a name given one, NAME.shape[k], or two of them joined by //, *, + or -.
std::optional<long> eval_int(std::string_view e, const Env& env, int depth) {
    for (std::string_view op : {"//", "*", "+", "-"}) {
        const std::size_t at = e.find(op);
        if (at == std::string_view::npos || at == 0) continue;
        const auto l = eval_atom(e.substr(0, at), env, depth), r = eval_atom(e.substr(at + op.size()), env, depth);
        if (!l || !r) return std::nullopt;
        if (op == "//") return *r > 0 ? std::optional<long>(*l / *r) : std::nullopt;
        long out = 0;  // past a long's range: no integer the code means
        const bool over = op == "*" ? __builtin_mul_overflow(*l, *r, &out) : op == "+" ? __builtin_add_overflow(*l, *r, &out)
                                                                                         : __builtin_sub_overflow(*l, *r, &out);
        return over ? std::nullopt : std::optional<long>(out);
    }
    return eval_atom(e, env, depth);
}

// A boolean argument as written (True, False, or a name given one); `fallback` when it is neither.
bool eval_bool(const std::string& e, const Env& env, bool fallback) {
    const std::string t = trim(e);
    if (t == "True") return true;
    if (t == "False") return false;
    const auto it = env.values.find(t);
    return it != env.values.end() && (it->second == "True" || it->second == "False") ? it->second == "True" : fallback;
}

// A keyword argument's value ("bias=False" -> "False"), or "".
std::string keyword(const std::vector<std::string>& items, std::string_view name) {
    for (const std::string& it : items) {
        const std::size_t eq = it.find('=');
        if (eq != std::string::npos && trim(std::string_view(it).substr(0, eq)) == name) return trim(std::string_view(it).substr(eq + 1));
    }
    return "";
}

// The call's positional arguments (those with no '=').
std::size_t positional_count(const std::vector<std::string>& items) {
    return static_cast<std::size_t>(std::count_if(items.begin(), items.end(), [](const std::string& it) { return it.find('=') == std::string::npos; }));
}

// A call's argument as Python binds it: the `index`-th positional one, else the keyword `name`'s value; "" when neither.
std::string argument(const std::vector<std::string>& items, std::size_t index, std::string_view name) {
    std::size_t p = 0;
    for (const std::string& it : items)
        if (it.find('=') == std::string::npos && p++ == index) return it;
    return keyword(items, name);
}

// Calls whose draws from torch's generator the reader cannot count: after one, the seed's stream is unknown.
bool draws_uncounted(std::string_view line) {
    for (std::string_view call : {"torch.randint(", "torch.normal(", "torch.randperm(", "torch.rand_like(", "torch.randn_like(",
                                  "nn.MultiheadAttention(", "nn.TransformerEncoderLayer(", "nn.TransformerDecoderLayer(",
                                  "nn.Transformer(", "nn.Conv1d(", "nn.Conv2d(", "nn.init.", ".normal_(", ".uniform_("})
        if (line.find(call) != std::string_view::npos) return true;
    return false;
}

// torch.randn's n values from the generator as torch.manual_seed(seed) left it after `drawn` draws, `drawn`
// advanced past what they take: 16 or more as normal_fill does (n uniform floats, then Box-Muller on each
// block of 16, its tail block redrawn), fewer one at a time as normal_distribution<double> does (two 53-bit
// uniforms a pair, the second of the pair kept in `cached` for the next normal, as the generator keeps it).
std::vector<float> torch_randn(std::uint64_t seed, std::uint64_t& drawn, std::optional<double>& cached, std::size_t n) {
    std::mt19937 engine(static_cast<std::uint32_t>(seed & 0xffffffffu));
    engine.discard(drawn);
    std::vector<float> out(n);
    const double pi = 3.14159265358979323846;
    if (n >= 16) {
        auto uniform = [&] {
            ++drawn;
            return static_cast<float>(static_cast<double>(engine() & 0xffffffu) * (1.0 / 16777216.0));
        };
        auto fill16 = [&](float* d) {
            for (std::size_t j = 0; j < 8; ++j) {
                const float u1 = 1 - d[j], u2 = d[j + 8];
                const float radius = std::sqrt(-2 * std::log(u1));
                const double theta = 2.0f * pi * u2;
                d[j] = static_cast<float>(radius * std::cos(theta));
                d[j + 8] = static_cast<float>(radius * std::sin(theta));
            }
        };
        for (float& x : out) x = uniform();
        for (std::size_t i = 0; i + 16 <= n; i += 16) fill16(out.data() + i);
        if (n % 16) {
            float* tail = out.data() + n - 16;
            for (std::size_t k = 0; k < 16; ++k) tail[k] = uniform();
            fill16(tail);
        }
        return out;
    }
    auto uniform64 = [&] {
        const std::uint64_t hi = engine(), lo = engine();
        drawn += 2;
        return static_cast<double>(((hi << 32) | lo) & ((std::uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
    };
    for (float& x : out) {
        if (cached) {
            x = static_cast<float>(*cached);
            cached.reset();
            continue;
        }
        const double u1 = uniform64(), u2 = uniform64();
        const double r = std::sqrt(-2.0 * std::log1p(-u2)), theta = 2.0 * pi * u1;
        cached = r * std::sin(theta);
        x = static_cast<float>(r * std::cos(theta));
    }
    return out;
}

// A number the code writes (0.1, 1e-2, 2), or none.
std::optional<double> eval_number(const std::string& e) {
    const std::string t = trim(e);
    if (t.empty() || t.size() > 24 || t.find_first_not_of("0123456789.eE+-") != std::string::npos) return std::nullopt;
    try {
        std::size_t used = 0;
        const double v = std::stod(t, &used);
        return used == t.size() && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
}

// "W_query", "query", "q_proj", "Wq": the weight a module's attribute is, W_Q, W_K, W_V or W_O; "" when none.
std::string linear_role(const std::string& attr) {
    std::string lower;
    for (char c : attr) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::vector<std::string> words;
    std::string w;
    for (char c : lower + "_") {
        if (std::isalnum(static_cast<unsigned char>(c))) w += c;
        else if (!w.empty()) words.push_back(std::move(w)), w.clear();
    }
    for (const std::string& x : words) {
        if (x == "q" || x == "query" || x == "queries" || x == "wq") return "W_Q";
        if (x == "k" || x == "key" || x == "keys" || x == "wk") return "W_K";
        if (x == "v" || x == "value" || x == "values" || x == "wv") return "W_V";
        if (x == "o" || x == "out" || x == "output" || x == "wo") return "W_O";
    }
    return "";
}

// What the code does with a draw, from the text before and after the call: kept as drawn (alone, or in
// nn.Parameter(...)), or times or over a constant (* 0.1, / np.sqrt(d_k), / math.sqrt(8)); else none (the
// draw is counted, not kept). `factor` is 1 for a draw kept as drawn; `divide` says which way.
std::optional<Kept> kept_draw(const std::string& before, const std::string& after, const Env& env) {
    if (!before.empty() && !before.ends_with("Parameter(")) return std::nullopt;
    if (after.empty() || after[0] == ')' || after[0] == ',') return Kept{};
    if (after[0] != '*' && after[0] != '/') return std::nullopt;
    std::string operand = trim(std::string_view(after).substr(1));
    if (const std::size_t close = operand.find_first_of("),"); close != std::string::npos && !operand.ends_with(")"))
        operand = trim(std::string_view(operand).substr(0, close));  // nn.Parameter(torch.randn(4, 4) * 0.1)
    auto value = [&](const std::string& x) -> std::optional<double> {
        if (const auto n = eval_number(x)) return n;
        if (const auto i = eval_int(x, env)) return static_cast<double>(*i);
        return std::nullopt;
    };
    // one constant only: a further operation (* 2 - 1) is no constant factor
    const bool call = operand.find('(') != std::string::npos;
    if (operand.empty() || (!call && operand.find_first_of("+-*/ ") != std::string::npos && !eval_number(operand))) return std::nullopt;
    std::optional<double> c;
    for (std::string_view sqrt : {"np.sqrt(", "math.sqrt(", "numpy.sqrt("})
        if (operand.rfind(sqrt, 0) == 0 && operand.back() == ')') {
            const auto k = value(operand.substr(sqrt.size(), operand.size() - sqrt.size() - 1));
            if (k && *k > 0) c = std::sqrt(*k);
            if (!c) return std::nullopt;
        }
    if (!c) c = value(operand);
    if (!c || (after[0] == '/' && *c == 0)) return std::nullopt;
    return Kept{*c, after[0] == '/'};
}

class Seeded {
public:
    explicit Seeded(Scan& scan) : scan_(scan), s_(scan.s()) {
        env_.shape = [this](const std::string& name, long k) -> std::optional<long> {
            const auto it = shapes_.find(name);
            if (it == shapes_.end()) return std::nullopt;
            const long n = static_cast<long>(it->second.size()), i = k < 0 ? n + k : k;
            return i >= 0 && i < n ? std::optional<long>(static_cast<long>(it->second[static_cast<std::size_t>(i)])) : std::nullopt;
        };
    }

    void run() {
        for (const auto& [at, a] : scan_.found())
            if (!a.name.empty() && !a.shape.empty()) shapes_[a.name] = a.shape;
        for (std::size_t b = 0; b < s_.size();) {
            const std::size_t e = std::min(s_.find('\n', b), s_.size());
            if (e - b <= kMaxCodeLine && !scan_.text().place_of(b).output) line(b, e);
            b = e + 1;
        }
    }

private:
    void line(std::size_t b, std::size_t e) {
        const std::string_view raw = s_.substr(b, e - b);
        std::size_t indent = 0;
        while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) ++indent;
        std::string text = trim(raw);
        if (const std::size_t hash = text.find('#'); hash != std::string::npos) text = trim(std::string_view(text).substr(0, hash));
        if (text.empty()) return;
        // inside a class body: its __init__'s draws
        if (cls_ && indent > class_indent_) {
            body(text, indent);
            return;
        }
        cls_.reset();
        // inside a function's body or a loop's: run when called, or as many times as the loop turns, neither
        // followed; a draw there makes the function one whose calls end every stream, and a loop end them at once
        if (block_indent_ != std::string::npos && indent > block_indent_) {
            if (draws_in(text)) {
                if (!block_fn_.empty() && drawing_fns_.size() < kMaxModules) drawing_fns_.insert(block_fn_);
                if (block_fn_.empty()) end_streams();
            }
            return;
        }
        block_indent_ = std::string::npos;
        if (text.rfind("def ", 0) == 0 || text.rfind("for ", 0) == 0 || text.rfind("while ", 0) == 0) {
            block_indent_ = indent;
            block_fn_.clear();
            if (text.rfind("def ", 0) == 0) {
                std::size_t k = 4;
                while (k < text.size() && ident_char(text[k])) ++k;
                block_fn_ = text.substr(4, k - 4);
            }
            const std::size_t colon = text.rfind(':');  // a body on the header's own line: `def f(): return torch.rand(2)`
            if (colon != std::string::npos && draws_in(text.substr(colon + 1))) {
                if (!block_fn_.empty() && drawing_fns_.size() < kMaxModules) drawing_fns_.insert(block_fn_);
                if (block_fn_.empty()) end_streams();
            }
            return;
        }
        if (text.rfind("class ", 0) == 0) {
            std::size_t k = 6;
            while (k < text.size() && ident_char(text[k])) ++k;
            cls_ = text.substr(6, k - 6);
            class_indent_ = indent;
            if (modules_.size() >= kMaxModules && !modules_.count(*cls_)) {  // past the bound: its instances end the stream
                cls_.reset();
                return;
            }
            modules_[*cls_] = Module{};
            init_indent_ = std::string::npos;
            return;
        }
        top(text, b, e);
    }

    void body(const std::string& text, std::size_t indent) {
        Module& m = modules_[*cls_];
        if (text.rfind("def ", 0) == 0) {
            init_indent_ = text.rfind("def __init__(", 0) == 0 ? indent : std::string::npos;
            if (init_indent_ == std::string::npos) return;
            const auto args = call_args(text, text.find('('));
            if (!args) return void(m.unknown = true);
            for (const std::string& item : top_items(*args)) {
                const std::size_t eq = item.find('=');
                std::string name = trim(std::string_view(item).substr(0, eq));
                if (const std::size_t colon = name.find(':'); colon != std::string::npos) name = trim(std::string_view(name).substr(0, colon));
                if (name == "self" || name.empty() || name[0] == '*') continue;
                m.params.push_back(name);
                if (eq != std::string::npos) m.defaults[name] = trim(std::string_view(item).substr(eq + 1));
            }
            return;
        }
        if (init_indent_ == std::string::npos || indent <= init_indent_) return;
        if (draws_uncounted(text)) return void(m.unknown = true);
        if (const std::size_t at = find_call(text, "nn.Embedding("); at != std::string::npos) {  // counted: its lookups run in forward
            const auto args = call_args(text, at + 12);
            if (!args || m.draws.size() >= kMaxModuleDraws) return void(m.unknown = true);
            Draw d;
            d.kind = Draw::Kind::embedding;
            d.args = top_items(*args);
            m.draws.push_back(std::move(d));
            return;
        }
        const std::size_t linear = find_call(text, "nn.Linear("), rand = find_call(text, "torch.rand("),
                          randn = find_call(text, "torch.randn(");
        if (linear == std::string::npos && rand == std::string::npos && randn == std::string::npos) {
            // a list of heads: self.heads = nn.ModuleList([Head(d_in, d_out) for _ in range(num_heads)])
            if (const std::size_t loop = text.find(" for _ in range("); loop != std::string::npos && text.rfind("self.", 0) == 0)
                for (const auto& [name, mod] : modules_) {
                    const std::size_t at = find_call(text, name + "(");
                    if (name == *cls_ || at == std::string::npos || at > loop) continue;
                    const auto args = call_args(text, at + name.size());
                    const auto count = call_args(text, loop + 15);
                    if (!args || !count || m.draws.size() >= kMaxModuleDraws) break;
                    Draw d;
                    d.kind = Draw::Kind::heads;
                    d.module = name;
                    d.args = top_items(*args);
                    d.count = trim(*count);
                    m.draws.push_back(std::move(d));
                    return;
                }
            // an instance of another module built here draws too: its draws are not followed
            for (const auto& [name, mod] : modules_)
                if (name != *cls_ && find_call(text, name + "(") != std::string::npos) m.unknown = true;
            return;
        }
        Draw d;
        const std::size_t eq = text.find('=');
        if (eq == std::string::npos || text.rfind("self.", 0) != 0) return void(m.unknown = true);  // a draw not kept: counted blind
        d.attr = trim(std::string_view(text).substr(5, eq - 5));
        d.kind = linear != std::string::npos ? Draw::Kind::linear : rand != std::string::npos ? Draw::Kind::rand : Draw::Kind::randn;
        const std::size_t at = d.kind == Draw::Kind::linear ? linear : d.kind == Draw::Kind::rand ? rand : randn;
        const std::size_t open = at + (d.kind == Draw::Kind::linear ? 9 : d.kind == Draw::Kind::rand ? 10 : 11);
        const auto args = call_args(text, open);
        if (!args || m.draws.size() >= kMaxModuleDraws) return void(m.unknown = true);
        d.args = top_items(*args);
        if (d.kind != Draw::Kind::linear) {  // kept as drawn (rand), or scaled by a constant (randn)
            const std::string rhs = trim(std::string_view(text).substr(eq + 1));
            const std::size_t in_rhs = rhs.find(d.kind == Draw::Kind::rand ? "torch.rand(" : "torch.randn(");
            const auto kept = in_rhs == std::string::npos || in_rhs + (open - at) + 2 + args->size() > rhs.size() ? std::nullopt : kept_draw(trim(std::string_view(rhs).substr(0, in_rhs)),
                                        trim(std::string_view(rhs).substr(in_rhs + (open - at) + 2 + args->size())), env_);
            if (!kept || (d.kind == Draw::Kind::rand && kept->factor != 1)) d.attr.clear();  // counted, not kept
            else d.kept = *kept;
        }
        m.draws.push_back(std::move(d));
    }

    // A line that may draw from a generator: a draw this reader knows, one it cannot count, a module it builds or
    // a function of the code that draws.
    bool draws_in(std::string_view text) const {
        for (std::string_view call : {"torch.rand", "torch.randn", "nn.Linear(", "nn.Embedding(", "np.random.", "numpy.random.", ".random(",
                                      ".normal(", ".uniform(", ".standard_normal(", "torch.manual_seed("})
            if (text.find(call) != std::string_view::npos) return true;
        if (draws_uncounted(text)) return true;
        for (const auto& [name, m] : modules_)
            if (find_call(text, name + "(") != std::string_view::npos) return true;
        for (const std::string& fn : drawing_fns_)
            if (find_call(text, fn + "(") != std::string_view::npos) return true;
        return false;
    }

    // Every stream ends: torch's after its seed, numpy's legacy one and each Generator.
    void end_streams() {
        seed_.reset();
        numpy_.end_all();
    }

    void top(const std::string& text, std::size_t b, std::size_t e) {
        for (const std::string& fn : drawing_fns_)  // a function of the code that draws: its draws are not counted
            if (find_call(text, fn + "(") != std::string::npos) return end_streams();
        if (const std::size_t at = find_call(text, "torch.manual_seed("); at != std::string::npos) {
            const auto args = call_args(text, at + 17);
            const auto seed = args ? eval_int(*args, env_) : std::nullopt;
            seed_ = seed && *seed >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*seed)) : std::nullopt;
            seed_where_ = scan_.text().place_of(b).describe();
            drawn_ = 0;
            torch_normal_.reset();  // manual_seed clears the generator's kept normal too
            return;
        }
        // NAME = RHS (one name: a tuple or an attribute is not followed)
        std::string name, rhs = text;
        if (const std::size_t eq = text.find('='); eq != std::string::npos && eq + 1 < text.size() && text[eq + 1] != '=' && eq > 0 &&
                                                   text[eq - 1] != '!' && text[eq - 1] != '<' && text[eq - 1] != '>') {
            const std::string lhs = trim(std::string_view(text).substr(0, eq));
            rhs = trim(std::string_view(text).substr(eq + 1));
            if (is_identifier(lhs)) name = lhs;
            else if (lhs.find(',') != std::string::npos) return numpy_.unfollowed(text), assign_tuple(lhs, rhs);
        }
        const auto where = [&] { return scan_.text().place_of(b).describe(); };
        const auto add = [&](const std::string& n, std::size_t rows, std::size_t cols, std::vector<double> values, std::string how) {
            Generated g;
            g.as_generator = false;
            g.how = std::move(how);
            add_generated(n, rows, cols, values, std::move(g), b, e);
        };
        if (numpy_.line(name, rhs, text, where, env_, add)) return;
        if (const std::size_t at = find_call(rhs, "nn.MultiheadAttention("); at != std::string::npos) {
            const auto args = call_args(rhs, at + 21);
            return mha_draw(args ? top_items(*args) : std::vector<std::string>{}, env_, b, e);
        }
        if (draws_uncounted(rhs)) return void(seed_.reset());
        if (const std::size_t at = find_call(rhs, "nn.Embedding("); at != std::string::npos) {
            const auto args = call_args(rhs, at + 12);
            return embedding_draw(name, args ? top_items(*args) : std::vector<std::string>{}, env_);
        }
        for (const auto& [table, t] : tables_)
            if (const std::size_t at = find_call(rhs, table + "("); at != std::string::npos) {
                const auto args = call_args(rhs, at + table.size());
                if (args) lookup(name, t, trim(*args), b, e);
                return;
            }
        if (const std::size_t at = find_call(rhs, "torch.rand("); at != std::string::npos) {
            const auto args = call_args(rhs, at + 10);
            // kept as drawn: alone, or wrapped in nn.Parameter(...); drawn and then scaled or shifted: counted only
            const auto kept = args ? kept_draw(trim(std::string_view(rhs).substr(0, at)), trim(std::string_view(rhs).substr(at + 12 + args->size())), env_)
                                   : std::nullopt;
            const bool plain = kept && kept->factor == 1;
            return rand_draw(plain ? name : "", args ? top_items(*args) : std::vector<std::string>{}, env_, b, e);
        }
        if (const std::size_t at = find_call(rhs, "torch.randn("); at != std::string::npos) {
            const auto args = call_args(rhs, at + 11);
            const auto kept = args ? kept_draw(trim(std::string_view(rhs).substr(0, at)), trim(std::string_view(rhs).substr(at + 13 + args->size())), env_)
                                   : std::nullopt;
            return randn_draw(kept ? name : "", args ? top_items(*args) : std::vector<std::string>{}, kept.value_or(Kept{}), env_, b, e);
        }
        if (const std::size_t at = find_call(rhs, "nn.Linear("); at != std::string::npos) {
            const auto args = call_args(rhs, at + 9);
            return linear_draw(name, args ? top_items(*args) : std::vector<std::string>{}, env_, b, e);
        }
        for (auto& [cls, mod] : modules_) {
            const std::size_t at = find_call(rhs, cls + "(");
            if (at == std::string::npos) continue;
            const auto args = call_args(rhs, at + cls.size());
            return build(mod, args ? top_items(*args) : std::vector<std::string>{}, b, e);
        }
        // another module the article does not define may draw: the stream is no longer known
        for (std::size_t k = 0; k < rhs.size(); ++k)
            if (std::isupper(static_cast<unsigned char>(rhs[k])) && (k == 0 || !ident_char(rhs[k - 1]))) {
                std::size_t j = k;
                while (j < rhs.size() && ident_char(rhs[j])) ++j;
                if (j < rhs.size() && rhs[j] == '(' && rhs.compare(k, j - k, "True") != 0) return void(seed_.reset());
            }
        if (!name.empty() && (eval_int(rhs, env_) || rhs == "True" || rhs == "False")) env_.values[name] = rhs;
    }

    void assign_tuple(const std::string& lhs, const std::string& rhs) {
        const auto names = top_items(lhs), values = top_items(rhs);
        if (names.size() != values.size()) return;
        for (std::size_t k = 0; k < names.size(); ++k)
            if (is_identifier(names[k]) && eval_int(values[k], env_)) env_.values[names[k]] = values[k];
    }

    // torch.rand(a, b) or torch.rand((a, b)), at most two sides.
    void rand_draw(const std::string& name, std::vector<std::string> args, const Env& env, std::size_t b, std::size_t e) {
        if (args.size() >= 1 && !args[0].empty() && args[0].front() == '(' && args[0].back() == ')')
            args = top_items(std::string_view(args[0]).substr(1, args[0].size() - 2));
        std::vector<long> dims;
        for (const std::string& a : args) {
            if (a.find('=') != std::string::npos) continue;  // requires_grad=..., dtype=...
            const auto v = eval_int(a, env);
            if (!v || *v < 1 || *v > kMaxGeneratedSide) return void(seed_.reset());
            dims.push_back(*v);
        }
        for (std::size_t k = 0; k < dims.size() && dims.size() > 2;) dims[k] == 1 ? void(dims.erase(dims.begin() + static_cast<long>(k))) : void(++k);
        if (dims.empty() || dims.size() > 2) return void(seed_.reset());
        const std::size_t rows = dims.size() == 2 ? static_cast<std::size_t>(dims[0]) : 1, cols = static_cast<std::size_t>(dims.back());
        emit(name, rows, cols, 0.0, 1.0, fmt::format("torch.rand({})", fmt::join(args, ", ")), b, e);
    }

    // torch.randn(a, b) (or (1, a, b): a batch of one), its values written out, times or over `kept`'s constant
    // in float32 as torch scales a tensor by a Python number.
    void randn_draw(const std::string& name, std::vector<std::string> args, const Kept& kept, const Env& env, std::size_t b, std::size_t e) {
        if (!seed_) return;
        if (args.size() >= 1 && !args[0].empty() && args[0].front() == '(' && args[0].back() == ')')
            args = top_items(std::string_view(args[0]).substr(1, args[0].size() - 2));
        std::vector<long> dims;
        for (const std::string& a : args) {
            if (a.find('=') != std::string::npos) continue;
            const auto v = eval_int(a, env);
            if (!v || *v < 1 || *v > kMaxGeneratedSide) return void(seed_.reset());
            dims.push_back(*v);
        }
        // a batch of one, first or (nn.MultiheadAttention's (T, 1, E) without batch_first) in the middle: the same values
        for (std::size_t k = 0; k < dims.size() && dims.size() > 2;) dims[k] == 1 ? void(dims.erase(dims.begin() + static_cast<long>(k))) : void(++k);
        if (dims.empty() || dims.size() > 2 || drawn_ + 4 * static_cast<std::uint64_t>(dims[0]) * dims.back() > kMaxTorchOffset)
            return void(seed_.reset());
        const std::size_t rows = dims.size() == 2 ? static_cast<std::size_t>(dims[0]) : 1, cols = static_cast<std::size_t>(dims.back());
        const std::uint64_t from = drawn_;
        std::vector<float> v = torch_randn(*seed_, drawn_, torch_normal_, rows * cols);
        if (name.empty()) return;
        const float c = static_cast<float>(kept.factor);  // torch scales a float tensor by a Python number in float32
        std::vector<double> values(v.size());
        for (std::size_t k = 0; k < v.size(); ++k) values[k] = kept.divide ? v[k] / c : v[k] * c;
        Generated g;
        g.as_generator = false;
        g.seed = *seed_;
        g.offset = from;
        g.how = fmt::format("torch.manual_seed({}) at {}, then {}torch.randn({}) from draw {}", *seed_, seed_where_,
                            generated_name(name) == name ? "" : name + " = ", fmt::join(args, ", "), from);
        add_generated(name, rows, cols, values, std::move(g), b, e);
    }

    // nn.Linear(in, out, bias=...): its weight (out x in, as nn.Linear keeps it) between ±sqrt(3)·gain/sqrt(in)
    // (kaiming_uniform_ with a = sqrt(5), as torch computes the bound in double), then its bias between ±1/sqrt(in).
    void linear_draw(const std::string& name, const std::vector<std::string>& args, const Env& env, std::size_t b, std::size_t e) {
        const auto in = eval_int(argument(args, 0, "in_features"), env), out = eval_int(argument(args, 1, "out_features"), env);
        const std::string bias_s = argument(args, 2, "bias");
        const bool bias = bias_s.empty() || eval_bool(bias_s, env, true);
        if (!in || !out || *in < 1 || *out < 1 || *in > kMaxGeneratedSide || *out > kMaxGeneratedSide) return void(seed_.reset());
        const double slope = std::sqrt(5.0), gain = std::sqrt(2.0 / (1 + slope * slope));
        const double bound = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(*in)));
        const std::string call = fmt::format("nn.Linear({})", fmt::join(args, ", "));
        out_in_ = true;
        emit(name, static_cast<std::size_t>(*out), static_cast<std::size_t>(*in), -bound, bound, call + ", its weight", b, e);
        out_in_ = false;
        if (!bias || !seed_) return;
        const double bias_bound = 1.0 / std::sqrt(static_cast<double>(*in));
        const std::string role = linear_role(name);
        emit(role.empty() ? name + "_bias" : "b_" + role.substr(2), 1, static_cast<std::size_t>(*out), -bias_bound, bias_bound,
             call + ", its bias", b, e);
    }

    // nn.Embedding(num, dim, padding_idx=...): its table drawn as torch.randn(num, dim) draws it (normal_ on the
    // whole table), the padding row zeroed; kept under `name` for the lookups after it. A table too large to
    // keep, or one whose lookups renormalize (max_norm), is counted and not kept.
    void embedding_draw(const std::string& name, const std::vector<std::string>& args, const Env& env) {
        if (!seed_) return;
        const auto rows = eval_int(argument(args, 0, "num_embeddings"), env), cols = eval_int(argument(args, 1, "embedding_dim"), env);
        if (!rows || !cols || *rows < 1 || *cols < 1 || *cols > kMaxGeneratedSide ||
            static_cast<std::uint64_t>(*rows) * static_cast<std::uint64_t>(*cols) > kMaxEmbeddingValues)
            return void(seed_.reset());
        const std::uint64_t n = static_cast<std::uint64_t>(*rows) * static_cast<std::uint64_t>(*cols);
        if (drawn_ + 2 * n + 32 > kMaxTorchOffset) return void(seed_.reset());
        const std::uint64_t from = drawn_;
        Table t;
        t.rows = static_cast<std::size_t>(*rows);
        t.cols = static_cast<std::size_t>(*cols);
        if (n >= 16 && kept_ + n > kMaxKeptValues) return void(drawn_ += n + (n % 16 ? 16 : 0));  // counted as normal_fill draws
        t.values = torch_randn(*seed_, drawn_, torch_normal_, static_cast<std::size_t>(n));
        kept_ += static_cast<std::size_t>(n);
        t.seed = *seed_;
        t.offset = from;
        const std::string pad_s = argument(args, 2, "padding_idx");
        if (!pad_s.empty() && pad_s != "None") {
            const auto pad = eval_int(pad_s, env);
            const long p = pad ? (*pad < 0 ? *pad + *rows : *pad) : -1;
            if (p < 0 || p >= *rows) return;  // torch refuses it; nothing is kept
            std::fill_n(t.values.begin() + p * *cols, *cols, 0.0f);
        }
        if (name.empty() || !is_identifier(name) || !argument(args, 3, "max_norm").empty()) return;
        t.how = fmt::format("torch.manual_seed({}) at {}, then {} = nn.Embedding({}) from draw {}", *seed_, seed_where_, name,
                            fmt::join(args, ", "), from);
        tables_[name] = std::move(t);
    }

    // NAME = table(ids): the table's rows the ids pick, as an array named NAME. The ids: a list the code writes
    // (torch.tensor([4, 1, 5])), or the integers printed under their name before this line (print(ids)); else
    // NAME's own printed rows, each matched to the one row of the table it rounds from.
    void lookup(const std::string& name, const Table& t, const std::string& arg, std::size_t b, std::size_t e) {
        if (name.empty() || ++lookups_ > kMaxLookups) return;
        std::vector<std::size_t> ids;
        std::string from;
        std::optional<std::size_t> ids_array;  // the printed array the ids are read from
        auto integers = [&](const PrintedArray& a) {
            std::vector<std::size_t> v;
            for (const auto& r : a.rows)
                for (const auto& x : r) {
                    if (x.decimals != 0 || x.value < 0 || x.value >= static_cast<double>(t.rows) || x.value != std::floor(x.value)) return std::vector<std::size_t>{};
                    v.push_back(static_cast<std::size_t>(x.value));
                }
            return v;
        };
        for (std::size_t k = 0; k < scan_.found().size(); ++k) {
            const auto& [at, a] = scan_.found()[k];
            if (at >= e) break;
            if (a.name == arg && !a.generated && !a.rows.empty())
                if (auto v = integers(a); !v.empty()) ids = std::move(v), ids_array = k, from = fmt::format("the ids {} printed at {}", arg, a.place.describe());
            if (at >= b && !a.generated && arg.find('[') != std::string::npos)  // written in the call: embed(torch.tensor([4, 1, 5]))
                if (auto v = integers(a); !v.empty()) ids = std::move(v), ids_array = k, from = "the ids written in the call";
        }
        if (ids.empty()) ids = matched_rows(name, t, e), from = "each printed row of " + name + " matched to the one row of the table it rounds from";
        if (ids.empty() || ids.size() > static_cast<std::size_t>(kMaxGeneratedSide)) return;
        std::vector<double> values;
        for (std::size_t i : ids)
            for (std::size_t j = 0; j < t.cols; ++j) values.push_back(t.values[i * t.cols + j]);
        Generated g;
        g.as_generator = false;
        g.embedding = true;
        g.seed = t.seed;
        g.offset = t.offset;
        g.how = fmt::format("{}; rows {} of its table ({})", t.how, json_ids(ids), from);
        if (ids_array) scan_.mark_ids(*ids_array);
        add_generated(name, ids.size(), t.cols, values, std::move(g), b, e);
    }

    // The rows of `t` NAME's first printed array after byte `from` shows, each printed row rounded from exactly
    // one of them at its printed decimals; empty when any row matches none or several.
    std::vector<std::size_t> matched_rows(const std::string& name, const Table& t, std::size_t from) const {
        for (const auto& [at, a] : scan_.found()) {
            if (at < from || a.name != name || a.generated || a.rows.empty() || a.rows[0].size() != t.cols) continue;
            constexpr std::uint64_t kMaxCompared = std::uint64_t{1} << 24;  // a bounded search, whatever the article
            if (static_cast<std::uint64_t>(a.rows.size()) * t.rows * t.cols > kMaxCompared) return {};
            std::vector<std::size_t> ids;
            for (const auto& r : a.rows) {
                if (r.size() != t.cols) return {};
                std::size_t hit = t.rows;
                for (std::size_t i = 0; i < t.rows; ++i) {
                    bool same = true;
                    for (std::size_t j = 0; j < t.cols && same; ++j)
                        same = std::fabs(t.values[i * t.cols + j] - r[j].value) <= 0.5 * std::pow(10.0, -r[j].decimals) * (1 + 1e-9);
                    if (!same) continue;
                    if (hit != t.rows) return {};  // two rows round to it: which one is unknown
                    hit = i;
                }
                if (hit == t.rows) return {};
                ids.push_back(hit);
            }
            return ids;
        }
        return {};
    }

    static std::string json_ids(const std::vector<std::size_t>& ids) {
        return ids.size() <= 16 ? fmt::format("[{}]", fmt::join(ids, ", ")) : fmt::format("[{}, ... ({} ids)]", fmt::join(ids.begin(), ids.begin() + 8, ", "), ids.size());
    }

    // A module built: its __init__'s draws in order, its parameters bound to the call's arguments.
    void build(const Module& m, const std::vector<std::string>& args, std::size_t b, std::size_t e) { build(m, args, env_, b, e); }

    // `m` built with `args` as `caller` (the top level, or the module that builds it) names them.
    void build(const Module& m, const std::vector<std::string>& args, const Env& caller, std::size_t b, std::size_t e) {
        if (!seed_) return;
        if (m.unknown) return void(seed_.reset());
        const auto resolved = [&](const std::string& a) -> std::string {  // an argument as the module sees it
            if (const auto v = eval_int(a, caller)) return std::to_string(*v);
            if (a == "True" || a == "False") return a;
            const auto it = caller.values.find(a);
            return it != caller.values.end() ? it->second : a;
        };
        Env env = env_;
        std::set<std::string> bound;  // the parameters the call gives, by position or keyword
        std::size_t p = 0;
        for (const std::string& a : args) {
            const std::size_t eq = a.find('=');
            if (eq != std::string::npos) {
                const std::string param = trim(std::string_view(a).substr(0, eq));
                env.values[param] = resolved(trim(std::string_view(a).substr(eq + 1)));
                bound.insert(param);
            } else if (p < m.params.size()) {
                env.values[m.params[p]] = resolved(a);
                bound.insert(m.params[p++]);
            }
        }
        for (const auto& kv : m.defaults)  // the others take their defaults
            if (!bound.count(kv.first)) env.values[kv.first] = kv.second;
        for (const Draw& d : m.draws) {
            if (!seed_) return;
            if (d.kind == Draw::Kind::linear) linear_draw(d.attr, d.args, env, b, e);
            else if (d.kind == Draw::Kind::rand) rand_draw(d.attr, d.args, env, b, e);
            else if (d.kind == Draw::Kind::embedding) embedding_draw("", d.args, env);
            else if (d.kind == Draw::Kind::heads) heads_draw(d, env, b, e);
            else randn_draw(d.attr, d.args, d.kept, env, b, e);
        }
    }

    // nn.MultiheadAttention(E, H, bias=...) as PyTorch builds it: its out_proj, an nn.Linear(E, E), draws its weight
    // (kaiming_uniform_) and its bias; then _reset_parameters draws in_proj_weight (3E x E, xavier_uniform_, ±√(6 / 4E))
    // and sets both biases to 0. W_Q, W_K and W_V are in_proj_weight's three blocks of E rows (x·Wᵀ), W_O out_proj's
    // weight. Separate key and value widths (kdim, vdim) or bias_k and bias_v are not followed.
    void mha_draw(const std::vector<std::string>& args, const Env& env, std::size_t b, std::size_t e) {
        if (!seed_) return;
        const auto E = eval_int(argument(args, 0, "embed_dim"), env), H = eval_int(argument(args, 1, "num_heads"), env);
        const std::string bias_s = argument(args, 3, "bias");
        const bool bias = bias_s.empty() || eval_bool(bias_s, env, true);
        const auto other = [&](const char* kw) { const std::string v = keyword(args, kw); return !v.empty() && v != "None" && v != "False"; };
        if (!E || !H || *E < 1 || *H < 1 || *E > kMaxGeneratedSide || *E % *H != 0 || positional_count(args) > 4 || other("add_bias_kv") ||
            other("kdim") || other("vdim"))
            return void(seed_.reset());
        const std::size_t n = static_cast<std::size_t>(*E);
        const std::string call = fmt::format("nn.MultiheadAttention({})", fmt::join(args, ", "));
        const double slope = std::sqrt(5.0), gain = std::sqrt(2.0 / (1 + slope * slope));
        const double out_bound = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(n)));
        const double in_bound = std::sqrt(3.0) * (1.0 * std::sqrt(2.0 / static_cast<double>(n + 3 * n)));
        if (drawn_ + 4 * n * n + n > kMaxTorchOffset) return void(seed_.reset());
        // W_Q, W_K, W_V listed first (as the code uses them), from their draws after out_proj's; then W_O
        const std::uint64_t out_from = drawn_;
        drawn_ += n * n + (bias ? n : 0);  // out_proj's weight, then its bias (drawn and then set to 0)
        heads_next_ = static_cast<std::size_t>(*H);
        emit("W_Q", n, n, -in_bound, in_bound, call + ", its in_proj_weight's first " + std::to_string(n) + " rows", b, e);
        heads_next_ = 0;
        emit("W_K", n, n, -in_bound, in_bound, call + ", its in_proj_weight's next " + std::to_string(n) + " rows", b, e);
        emit("W_V", n, n, -in_bound, in_bound, call + ", its in_proj_weight's last " + std::to_string(n) + " rows", b, e);
        if (!seed_) return;
        const std::uint64_t after = drawn_;
        drawn_ = out_from;
        emit("W_O", n, n, -out_bound, out_bound, call + ", its out_proj.weight", b, e);
        drawn_ = after;
    }

    // A list of heads, the same module built `count` times in a row: each weight of the heads side by side as
    // the heads' concatenated outputs use them (x·W's columns, or nn.Linear's rows: head h's block h), one array
    // per weight in which the draft's heads split. Weights a head does not share with the others are counted only.
    void heads_draw(const Draw& d, const Env& env, std::size_t b, std::size_t e) {
        const auto n = eval_int(d.count, env);
        const auto it = modules_.find(d.module);
        if (!n || *n < 1 || *n > kMaxHeads || it == modules_.end() || capture_) return void(seed_.reset());  // (no list of lists)
        const std::uint64_t from = drawn_;
        std::vector<std::vector<Captured>> heads(static_cast<std::size_t>(*n));
        for (auto& h : heads) {
            capture_ = &h;
            build(it->second, d.args, env, b, e);
            capture_ = nullptr;
            if (!seed_) return;
        }
        for (std::size_t w = 0; w < heads[0].size(); ++w) {
            const Captured& c0 = heads[0][w];
            bool same = !c0.name.empty();
            for (const auto& h : heads)
                same = same && w < h.size() && h[w].name == c0.name && h[w].rows == c0.rows && h[w].cols == c0.cols;
            if (!same) continue;
            const std::size_t H = heads.size();
            const std::size_t rows = c0.out_in ? c0.rows * H : c0.rows, cols = c0.out_in ? c0.cols : c0.cols * H;
            std::vector<double> v(rows * cols);
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < c0.rows; ++i)
                    for (std::size_t j = 0; j < c0.cols; ++j)
                        v[c0.out_in ? (h * c0.rows + i) * cols + j : i * cols + h * c0.cols + j] = heads[h][w].values[i * c0.cols + j];
            Generated g;
            g.as_generator = false;
            g.seed = *seed_;
            g.offset = from;
            g.heads = H;
            g.how = fmt::format("torch.manual_seed({}) at {}, then {} heads of {}({}) from draw {}: each head's {} side by side", *seed_,
                                seed_where_, H, d.module, fmt::join(d.args, ", "), from, c0.attr);
            add_generated(c0.attr, rows, cols, v, std::move(g), b, e);
        }
    }

    void emit(const std::string& name, std::size_t rows, std::size_t cols, double low, double high, const std::string& call,
              std::size_t b, std::size_t e) {
        if (!seed_) return;
        const std::uint64_t n = static_cast<std::uint64_t>(rows) * cols;
        if (drawn_ + n > kMaxTorchOffset) return void(seed_.reset());
        if (name.empty() || kept_ + n > kMaxKeptValues) return void(drawn_ += n);  // drawn and not kept (print(torch.rand(2, 2))): counted only
        const Tensor t = torch_uniform({rows, cols}, *seed_, drawn_, low, high);
        Generated g;
        g.seed = *seed_;
        g.offset = drawn_;
        g.low = low;
        g.high = high;
        g.how = fmt::format("torch.manual_seed({}) at {}, then {}{} from draw {}", *seed_, seed_where_,
                            generated_name(name) == name ? "" : name + " = ", call, drawn_);
        g.heads = heads_next_;
        drawn_ += n;
        add_generated(name, rows, cols, std::vector<double>(t.data.begin(), t.data.end()), std::move(g), b, e);
    }

    // What a draw assigned to `name` is called: its role when it has one (self.query, q_proj, W_query: W_Q), a bias as named.
    static std::string generated_name(const std::string& name) {
        const std::string role = linear_role(name);
        return role.empty() || name.rfind("b_", 0) == 0 ? name : role;
    }

    // The array a draw gives `name`, its values row-major, added where its line stands.
    void add_generated(const std::string& name, std::size_t rows, std::size_t cols, const std::vector<double>& values, Generated g,
                       std::size_t b, std::size_t e) {
        if (kept_ + rows * cols > kMaxKeptValues) return;  // counted (by the caller), not kept
        kept_ += rows * cols;
        if (capture_) return capture_->push_back({generated_name(name), name, rows, cols, values, out_in_});
        PrintedArray a;
        a.form = PrintedForm::code;
        a.name = generated_name(name);
        for (std::size_t i = 0; i < rows; ++i) {
            a.rows.emplace_back();
            for (std::size_t j = 0; j < cols; ++j) a.rows.back().push_back({values[i * cols + j], 9});
        }
        a.generated = std::move(g);
        set_shape(a, rows == 1 ? 1 : 2);
        shapes_[name] = a.shape;
        scan_.add(b, e, std::move(a));
    }

    Scan& scan_;
    std::string_view s_;
    Env env_;
    std::map<std::string, std::vector<std::size_t>> shapes_;  // the arrays' shapes by name (the last printed under it)
    std::map<std::string, Module> modules_;
    std::map<std::string, Table> tables_;  // the nn.Embedding tables kept, by the name the code gives them
    // A head's weights as its module draws them, kept aside while a list of heads is built (heads_draw).
    struct Captured {
        std::string name, attr;
        std::size_t rows = 0, cols = 0;
        std::vector<double> values;
        bool out_in = false;  // an nn.Linear's weight (out x in): heads stack by rows
    };
    std::vector<Captured>* capture_ = nullptr;
    bool out_in_ = false;  // the draw being added is an nn.Linear's weight
    std::size_t kept_ = 0;  // the generated values kept so far (kMaxKeptValues)
    std::size_t lookups_ = 0;  // the embedding lookups followed so far (kMaxLookups)
    std::size_t heads_next_ = 0;  // the heads the next weight emitted is split into (nn.MultiheadAttention's W_Q)
    std::optional<std::string> cls_;
    std::size_t class_indent_ = 0, init_indent_ = std::string::npos;
    std::size_t block_indent_ = std::string::npos;  // a top-level def's or loop's header indent, while in its body
    std::string block_fn_;                          // that def's name ("" for a loop)
    std::set<std::string> drawing_fns_;             // functions of the code whose bodies draw (at most kMaxModules)
    std::optional<std::uint64_t> seed_;
    std::string seed_where_;
    NumpyCode numpy_;  // numpy's draws, both generators' (scan_numpy.cpp)
    std::uint64_t drawn_ = 0;
    std::optional<double> torch_normal_;  // the second normal of torch.randn's last pair, kept by the generator
};

}  // namespace seeded_code

void scan_seeded(Scan& scan) { seeded_code::Seeded(scan).run(); }

}  // namespace attntrace
