#include "draft/draft.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "draft/place.hpp"
#include "evaluate/evaluate.hpp"
#include "lesson/lesson.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
// The given and rounding trials tried at most this many times each: a search that stays a few runs long.
constexpr std::size_t kMaxTrials = 12;

bool rectangular(const PrintedArray& a) {
    if (a.rows.empty() || a.elided) return false;
    for (const auto& r : a.rows)
        if (r.size() != a.rows[0].size() || r.empty()) return false;
    return true;
}

bool is_table(const PrintedArray& a) { return a.form != PrintedForm::prose && rectangular(a) && !a.operand; }

// A name without markup: "W^{Q}" -> "WQ", "W_q" -> "Wq", "\tilde{S}" -> "tildeS".
std::string bare(const std::string& name) {
    std::string out;
    for (char c : name)
        if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    return out;
}

// 0, 1, 2 for a name of W_Q, W_K, W_V; -1 otherwise.
int weight_role(const std::string& name) {
    const std::string b = bare(name);
    if (b.size() != 2 || (b[0] != 'W' && b[0] != 'w')) return -1;
    switch (std::toupper(static_cast<unsigned char>(b[1]))) {
        case 'Q': return 0;
        case 'K': return 1;
        case 'V': return 2;
        default: return -1;
    }
}

bool names_input(const std::string& name) {
    const std::string b = bare(name);
    return b == "X" || b == "E" || b == "x" || b == "Embeddings" || b == "embeddings" || b == "Embedding" || b == "H";
}

OrderedJson number_json(double v) {
    if (std::isinf(v)) return v < 0 ? OrderedJson("-inf") : OrderedJson("inf");
    return v;
}

// The array's numbers as a lesson writes them: a scalar, a vector or rows.
OrderedJson values_json(const PrintedArray& a) {
    if (a.rows.size() == 1 && a.rows[0].size() == 1) return number_json(a.rows[0][0].value);
    auto row_json = [](const std::vector<PrintedNumber>& r) {
        OrderedJson out = OrderedJson::array();
        for (const auto& n : r) out.push_back(number_json(n.value));
        return out;
    };
    if (a.rows.size() == 1) return row_json(a.rows[0]);
    OrderedJson out = OrderedJson::array();
    for (const auto& r : a.rows) out.push_back(row_json(r));
    return out;
}

int decimals_of(const PrintedArray& a) {
    int d = 0;
    for (const auto& r : a.rows)
        for (const auto& n : r)
            if (std::isfinite(n.value)) d = std::max(d, n.decimals);
    return std::min(d, 8);
}

struct Inputs {
    std::vector<std::string> tokens;
    std::size_t x = kNone;
    std::array<std::size_t, 3> w{kNone, kNone, kNone};
    std::size_t d_model = 0, d_k = 0;
};

Inputs choose_inputs(const Article& art, std::vector<std::string>& reasons) {
    Inputs in;
    // the token list most arrays have a row for: a quoted list, a quoted sentence, or an array's row labels
    struct Candidate {
        std::vector<std::string> words;
        std::string from;
    };
    std::vector<Candidate> cands;
    for (const auto& t : art.tokens)
        cands.push_back({t.words, (t.sentence ? "the sentence at " : "the list at ") + t.place.describe()});
    for (const auto& a : art.arrays)
        if (is_table(a) && a.row_labels.size() >= 2 &&
            std::none_of(a.row_labels.begin(), a.row_labels.end(), [](const std::string& l) { return l.empty(); }))
            cands.push_back({a.row_labels, "the row labels at " + a.place.describe()});
    std::size_t best = kNone, best_score = 0;
    for (std::size_t c = 0; c < cands.size(); ++c) {
        std::size_t score = 0;
        for (const auto& a : art.arrays)
            if (is_table(a) && a.rows.size() == cands[c].words.size()) score += 1 + (a.row_labels == cands[c].words ? 2 : 0);
        if (score > best_score) best = c, best_score = score;
    }
    if (best == kNone) return in;
    in.tokens = cands[best].words;
    reasons.push_back(fmt::format("tokens: {} ({}; {} printed arrays have a row per token)", json(in.tokens).dump(),
                                  cands[best].from, best_score));
    const std::size_t T = in.tokens.size();
    // X: the first array with a row per token, one named as an input first
    for (int pass = 0; pass < 2 && in.x == kNone; ++pass)
        for (std::size_t i = 0; i < art.arrays.size(); ++i) {
            const auto& a = art.arrays[i];
            if (!is_table(a) || a.rows.size() != T || a.rows[0].size() < 2) continue;
            if (pass == 0 && !names_input(a.name)) continue;
            in.x = i;
            in.d_model = a.rows[0].size();
            reasons.push_back(fmt::format("X: the {} x {} array at {}{}", T, in.d_model, a.place.describe(),
                                          pass == 0 ? " (named " + a.name + ")" : " (the first with a row per token)"));
            break;
        }
    if (in.x == kNone) return in;
    // W_Q, W_K, W_V: d_model rows, by name, else the first three after X
    std::vector<std::size_t> unnamed;
    for (std::size_t i = 0; i < art.arrays.size(); ++i) {
        const auto& a = art.arrays[i];
        if (i == in.x || !is_table(a) || a.rows.size() != in.d_model) continue;
        const int role = weight_role(a.name);
        if (role >= 0 && in.w[static_cast<std::size_t>(role)] == kNone) in.w[static_cast<std::size_t>(role)] = i;
        else if (role < 0 && i > in.x) unnamed.push_back(i);
    }
    const char* names[] = {"W_Q", "W_K", "W_V"};
    for (std::size_t r = 0, u = 0; r < 3; ++r) {
        if (in.w[r] != kNone) {
            reasons.push_back(fmt::format("{}: the array at {} (named {})", names[r], art.arrays[in.w[r]].place.describe(),
                                          art.arrays[in.w[r]].name));
        } else if (u < unnamed.size()) {
            in.w[r] = unnamed[u++];
            reasons.push_back(fmt::format("{}: the array at {} (the {} with d_model rows after X)", names[r],
                                          art.arrays[in.w[r]].place.describe(), u == 1 ? "first" : u == 2 ? "second" : "third"));
        }
    }
    if (in.w[0] != kNone) in.d_k = art.arrays[in.w[0]].rows[0].size();
    return in;
}

struct Conventions {
    bool scale = true;
    std::string mask = "none";
    bool transposed = false;
    std::string describe() const {
        return fmt::format("scaling {}, mask {}, weights {}", scale ? "by 1/sqrt(d_k)" : "off", mask,
                           transposed ? "transposed (out_in)" : "as printed (in_out)");
    }
};

std::string lesson_id(const std::string& file) {
    std::string stem = std::filesystem::path(file).stem().string(), id;
    for (char c : stem) id += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
    return id.empty() ? "draft" : id;
}

OrderedJson base_lesson(const Article& art, const Inputs& in, const Conventions& c) {
    OrderedJson l = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", lesson_id(art.file)},
              {"title", "Drafted from " + std::filesystem::path(art.file).filename().string()},
              {"source", {{"document", std::filesystem::path(art.file).filename().string()}}}};
    l["tokens"] = in.tokens;
    OrderedJson config = {{"d_model", in.d_model}, {"heads", 1}, {"mask", c.mask}, {"scale", c.scale}};
    if (in.d_k && in.d_k != in.d_model) config["d_k"] = in.d_k;
    if (c.transposed) config["weight_layout"] = "out_in";
    l["config"] = config;
    l["run"] = {{"from", "embed"}, {"to", "mix"}};
    l["inputs"] = {{"X", values_json(art.arrays[in.x])}};
    const char* names[] = {"W_Q", "W_K", "W_V"};
    OrderedJson w = OrderedJson::object();
    for (std::size_t r = 0; r < 3; ++r) w[names[r]] = values_json(art.arrays[in.w[r]]);
    l["weights"] = w;
    return l;
}

struct Scored {
    std::vector<Placement> placements;  // per candidate
    std::size_t agree = 0, total = 0;
    bool ran = false;
    std::string error;  // why the lesson did not run, when it did not
};

// The lesson run, and each candidate placed on the exact run or, where the lesson rounds, the document run.
Scored score(const OrderedJson& lesson, const Article& art, const std::vector<std::size_t>& candidates) {
    Scored s;
    std::unique_ptr<Evaluation> e;
    try {
        e = evaluate(parse_lesson(lesson.dump(), "draft"));
    } catch (const InputError& err) {
        s.error = err.after_file();  // a convention the lesson cannot have (a transpose that does not fit): no numbers agree
        return s;
    }
    s.ran = true;
    for (std::size_t i : candidates) {
        Placement p = place_array(art.arrays[i], e->exact);
        if (e->document) {
            Placement q = place_array(art.arrays[i], *e->document);
            if (q.agree > p.agree) p = std::move(q);
        }
        s.agree += p.agree;
        s.total += p.total;
        s.placements.push_back(std::move(p));
    }
    return s;
}


// "blocks.0.attn.hook_scores_raw" -> "scores_raw": a claim's id when the article names nothing.
std::string step_leaf(const std::string& step) {
    std::string leaf = step.substr(step.rfind('.') + 1);
    if (leaf.rfind("hook_", 0) == 0) leaf = leaf.substr(5);
    return leaf;
}

// A lesson refined from a base: the article's own chain (a printed step its formula does not give, given)
// and its rounding (a printed step rounded at its printed decimals), each kept when more printed numbers agree.
struct Refined {
    OrderedJson lesson;
    Scored score;
    Conventions conventions;
    std::vector<std::string> reasons, steps;  // why each was kept; "given Q" for the trials' list
};

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
}

Refined refine(OrderedJson lesson, const Article& art, const std::vector<std::size_t>& candidates) {
    Refined r;
    r.score = score(lesson, art, candidates);
    r.lesson = std::move(lesson);
    if (!r.score.ran) return r;
    std::size_t tries = 0;
    for (std::size_t k = 0; k < candidates.size() && tries < kMaxTrials; ++k) {
        const PrintedArray& a = art.arrays[candidates[k]];
        const Placement& p = r.score.placements[k];
        if (p.whole()) continue;
        // the step its name points to (a printed Q that X·W^Q does not give), else the one it was placed on
        // whole; never the input's own step (X is the input, not a step to give)
        std::string step = !step_hint(a.name).empty() ? "blocks.0.attn." + step_hint(a.name)
                           : !p.step.empty() && p.at.empty() ? p.step : "";
        if (step.empty() || step.find(".attn.") == std::string::npos) continue;
        if (r.lesson.contains("given") && r.lesson["given"].contains(step)) continue;
        OrderedJson trial = r.lesson;
        trial["given"][step] = values_json(a);
        ++tries;
        const Scored s = score(trial, art, candidates);
        // the gain in the other arrays: a given step's own array agrees with itself, which proves nothing
        const std::size_t before = r.score.agree - r.score.placements[k].agree;
        const std::size_t after = s.ran ? s.agree - s.placements[k].agree : 0;
        if (s.ran && after > before) {
            r.reasons.push_back(fmt::format("given {}: the array at {} ({} more printed numbers agree from it on)", step,
                                            a.place.describe(), after - before));
            r.steps.push_back("given " + step_leaf(step));
            r.lesson = std::move(trial);
            r.score = s;
        }
    }
    tries = 0;
    for (std::size_t k = 0; k < candidates.size() && tries < kMaxTrials; ++k) {
        const Placement& p = r.score.placements[k];
        if (p.step.empty() || !p.whole() || !p.at.empty()) continue;
        if (r.lesson.contains("document_rounding") && r.lesson["document_rounding"].contains(p.step)) continue;
        if (r.lesson.contains("given") && r.lesson["given"].contains(p.step)) continue;
        OrderedJson trial = r.lesson;
        const int dec = decimals_of(art.arrays[candidates[k]]);
        trial["document_rounding"][p.step] = dec;
        ++tries;
        const Scored s = score(trial, art, candidates);
        if (s.ran && s.agree > r.score.agree) {
            r.reasons.push_back(fmt::format("document_rounding {} at {} decimals, as printed at {} ({} more printed numbers agree)",
                                            p.step, dec, art.arrays[candidates[k]].place.describe(), s.agree - r.score.agree));
            r.steps.push_back(fmt::format("{} rounded to {}", step_leaf(p.step), dec));
            r.lesson = std::move(trial);
            r.score = s;
        }
    }
    return r;
}

std::string unique_id(std::string base, std::map<std::string, int>& used) {
    std::string id;
    for (char c : base)
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') id += c;
    if (id.empty()) id = "array";
    const int n = used[id]++;
    return n == 0 ? id : id + "-" + std::to_string(n + 1);
}

}  // namespace

Draft draft_lesson(const Article& art) {
    Draft d;
    const Inputs in = choose_inputs(art, d.reasons);
    if (in.tokens.empty() || in.x == kNone)
        fail_field(art.file, "", "an article that prints its tokens' embeddings (a matrix with a row per token)",
                   in.tokens.empty() ? "no list of tokens that its arrays have a row for" : "no array with a row per token");
    // The example X begins: the arrays after it, up to a new example (an array named and shaped as one
    // before it but printing other numbers: the next section's Q), or another X.
    std::vector<std::size_t> candidates;
    std::size_t example_end = art.arrays.size();
    for (std::size_t i = in.x + 1; i < art.arrays.size() && example_end == art.arrays.size(); ++i) {
        const auto& a = art.arrays[i];
        if (!is_table(a) || a.name.empty()) continue;
        for (std::size_t j = in.x; j < i; ++j) {
            const auto& b = art.arrays[j];
            if (is_table(b) && bare(b.name) == bare(a.name) && b.shape == a.shape && b.rows != a.rows) {
                example_end = i;
                d.reasons.push_back(fmt::format("the example ends before {} ({} printed again with other numbers): {} arrays after it "
                                                "are not drafted",
                                                a.place.describe(), a.name, art.arrays.size() - i));
                break;
            }
        }
    }
    for (std::size_t i = 0; i < example_end; ++i) {
        const auto& a = art.arrays[i];
        if (!is_table(a) || i == in.x || std::find(in.w.begin(), in.w.end(), i) != in.w.end()) continue;
        candidates.push_back(i);
    }
    const bool have_weights = std::none_of(in.w.begin(), in.w.end(), [](std::size_t i) { return i == kNone; });
    if (!have_weights)  // a draft runs the attention from X: an article that starts from the scores is not drafted yet
        fail_field(art.file, "", fmt::format("W_Q, W_K and W_V printed as matrices of {} rows (d_model, X's width)", in.d_model),
                   fmt::format("{} of them", std::count_if(in.w.begin(), in.w.end(), [](std::size_t i) { return i != kNone; })));
    // The grid of conventions, each refined by the article's chain and rounding; the one under which the most
    // printed numbers agree wins (the first on a tie).
    Refined best;
    for (bool transposed : {false, true})
        for (const char* mask : {"none", "causal"})
            for (bool scale : {true, false}) {
                const Conventions c{scale, mask, transposed};
                if (transposed && in.d_k != in.d_model) continue;  // out_in needs the square matrices printed
                Refined r = refine(base_lesson(art, in, c), art, candidates);
                d.trials.push_back({c.describe() + (r.steps.empty() ? "" : ", " + join(r.steps)), r.score.agree, r.score.total});
                if (r.score.ran && (!best.score.ran || r.score.agree > best.score.agree)) {
                    r.conventions = c;
                    best = std::move(r);
                }
            }
    if (!best.score.ran) {  // no convention gives a lesson that runs: say why, as the first one failed
        const Refined first = refine(base_lesson(art, in, Conventions{}), art, candidates);
        fail_field(art.file, "", "printed X and weights that make a lesson that runs",
                   "a lesson refused with \"" + first.score.error + "\"");
    }
    d.reasons.push_back("conventions: " + best.conventions.describe());
    for (auto& why : best.reasons) d.reasons.push_back(std::move(why));
    d.lesson = best.lesson;
    const Scored& best_score = best.score;
    // One claim per array placed with at least half its numbers agreeing; the rest listed.
    OrderedJson claims = OrderedJson::array(), unplaced = OrderedJson::array();
    std::map<std::string, int> used;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        const PrintedArray& a = art.arrays[candidates[k]];
        const Placement p = best_score.ran ? best_score.placements[k] : Placement{};
        if (!p.step.empty() && p.total > 0 && 2 * p.agree >= p.total) {
            OrderedJson c = {{"id", unique_id(a.name.empty() ? step_leaf(p.step) : bare(a.name), used)}, {"step", p.step}};
            if (!p.at.empty()) c["at"] = OrderedJson::parse(p.at.dump());
            c["decimals"] = decimals_of(a);
            c["values"] = values_json(a);
            c["expect"] = "agrees";  // replaced below by the verdict the check gives
            c["quote"] = a.quote;
            c["note"] = "drafted from " + a.place.describe();
            d.reasons.push_back(fmt::format("claim {}: the array at {} on {}{}: {} of {} printed numbers agree", c["id"].get<std::string>(),
                                            a.place.describe(), p.step, p.at.empty() ? "" : " " + p.at.dump(), p.agree, p.total));
            claims.push_back(std::move(c));
            continue;
        }
        DraftUnplaced u{a.place.describe(), a.quote, p.step.empty() ? "" : p.step + (p.at.empty() ? "" : " " + p.at.dump()),
                        p.agree, p.total, p.max_error};
        unplaced.push_back({{"where", u.where}, {"quote", u.quote}, {"nearest", u.nearest},
                            {"agree", fmt::format("{} of {}", u.agree, u.total)}, {"max_error", u.max_error}});
        d.unplaced.push_back(std::move(u));
    }
    // Prose numbers of two decimals or more that a cell gives exactly as printed ("ring attends 51% to fell").
    if (best_score.ran) {
        std::unique_ptr<Evaluation> e;
        try {
            e = evaluate(parse_lesson(d.lesson.dump(), "draft"));
        } catch (const InputError&) {
        }
        for (std::size_t i = 0; e && i < art.arrays.size(); ++i) {
            const PrintedArray& a = art.arrays[i];
            if (a.form != PrintedForm::prose || a.rows[0][0].decimals < 2) continue;
            const Placement p = place_array(a, e->exact);
            if (p.step.empty() || !p.whole()) continue;
            OrderedJson c = {{"id", unique_id(step_leaf(p.step) + "-line-" + std::to_string(a.place.line), used)}, {"step", p.step},
                             {"at", OrderedJson::parse(p.at.dump())},
                      {"decimals", a.rows[0][0].decimals}, {"values", a.rows[0][0].value}, {"expect", "agrees"},
                      {"quote", a.quote}, {"note", "drafted from " + a.place.describe()}};
            claims.push_back(std::move(c));
        }
    }
    if (!claims.empty()) d.lesson["claims"] = claims;
    if (!unplaced.empty()) d.lesson["unplaced"] = unplaced;
    // Each claim's expected verdict: the one the check gives.
    if (!claims.empty()) {
        try {
            const auto e = evaluate(parse_lesson(d.lesson.dump(), "draft"));
            for (std::size_t k = 0; k < e->report.results.size() && k < d.lesson["claims"].size(); ++k)
                d.lesson["claims"][k]["expect"] = std::string(verdict_name(e->report.results[k].verdict));
            d.complete = true;
        } catch (const InputError& err) {
            d.reasons.push_back(std::string("the drafted lesson does not check: ") + err.what());
        }
    }
    return d;
}

}  // namespace attntrace
