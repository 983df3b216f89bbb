#include "draft/chain.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "draft/start.hpp"
#include "lesson/lesson.hpp"
#include "trace/derived.hpp"
#include "trace/trace.hpp"

namespace attntrace {

std::unique_ptr<Evaluation> run_lesson(const OrderedJson& lesson) { return evaluate(parse_lesson(lesson.dump(), "draft")); }

// The lesson run, and each candidate placed on the exact run or, where the lesson rounds, the document run.
Scored score(const OrderedJson& lesson, const Article& art, const std::vector<std::size_t>& candidates, const Slack* slack) {
    Scored s;
    std::unique_ptr<Evaluation> e;
    try {
        e = run_lesson(lesson);
    } catch (const InputError& err) {
        s.error = err.after_file();  // a convention the lesson cannot have (a transpose that does not fit): no numbers agree
        return s;
    }
    s.ran = true;
    for (std::size_t i : candidates) {
        Placement p = place_array(art.arrays[i], e->exact, "", slack);
        if (e->document) {
            Placement q = place_array(art.arrays[i], *e->document, "", slack);
            if (q.agree > p.agree) p = std::move(q);
        }
        s.agree += p.agree;
        s.total += p.total;
        s.placements.push_back(std::move(p));
    }
    return s;
}

Slack input_rounding_slack(const OrderedJson& lesson) {
    Slack slack;
    if (!lesson.contains("input_decimals") || lesson["input_decimals"].empty()) return slack;
    Lesson base;
    std::unique_ptr<Evaluation> e;
    try {
        base = parse_lesson(lesson.dump(), "draft");
        base.document_rounding.clear();  // the exact arithmetic, its inputs moved
        e = evaluate(base);
    } catch (const InputError&) {
        return slack;
    }
    auto tensor = [](Lesson& l, const std::string& key) -> Tensor* {
        if (key.rfind("inputs.", 0) == 0 && l.inputs.count(key.substr(7))) return &l.inputs.at(key.substr(7));
        if (key.rfind("weights.", 0) == 0 && l.weights.count(key.substr(8))) return &l.weights.at(key.substr(8));
        if (key.rfind("given.", 0) == 0 && l.given.count(key.substr(6))) return &l.given.at(key.substr(6)).values;
        return nullptr;
    };
    std::size_t count = 0;
    for (const auto& [key, decimals] : base.input_decimals)
        if (const Tensor* t = tensor(base, key)) count += t->size();
    if (count == 0 || count > kMaxSlackValues) return slack;
    std::vector<StepValues> at_base;  // per step of the exact run kept in full, its values
    std::vector<const Step*> steps;
    for (const Step& s : e->exact.steps)
        if (s.recorded == Record::full && (s.holds_values() || is_derived(s))) {
            steps.push_back(&s);
            at_base.push_back(values_of(e->exact, s));
            slack[s.name].assign(at_base.back()->size(), 0.0f);
        }
    for (const auto& [key, decimals] : base.input_decimals) {
        const float half = static_cast<float>(0.5 * std::pow(10.0, -decimals));
        for (std::size_t i = 0; i < tensor(base, key)->size(); ++i) {
            Lesson moved = base;
            tensor(moved, key)->data[i] += half;
            std::unique_ptr<Evaluation> m;
            try {
                m = evaluate(std::move(moved));
            } catch (const InputError&) {
                continue;
            }
            for (std::size_t k = 0; k < steps.size(); ++k) {
                const Step* ms = m->exact.find(steps[k]->name);
                if (!ms || ms->recorded != Record::full) continue;
                const StepValues mv = values_of(m->exact, *ms);
                std::vector<float>& out = slack[steps[k]->name];
                if (mv->size() != out.size()) continue;
                for (std::size_t c = 0; c < out.size(); ++c) {
                    const float d = std::fabs(mv->ptr()[c] - at_base[k]->ptr()[c]);
                    if (std::isfinite(d)) out[c] += d;
                }
            }
        }
    }
    return slack;
}

// "blocks.0.attn.hook_scores_raw" -> "scores_raw": a claim's id when the article names nothing.
std::string step_leaf(const std::string& step) {
    std::string leaf = step.substr(step.rfind('.') + 1);
    if (leaf.rfind("hook_", 0) == 0) leaf = leaf.substr(5);
    return leaf;
}

namespace {

// A given step whose printed rows the formula gives at their printed decimals but for a few: only those
// rows given (`at` with the rows' list), so the rest of the step stays checked against attention and
// the claims that never read the wrong rows agree plainly (docs/lesson-format.md, A part of a step).
// Kept when the printed numbers agree no less; returns the rows given ("" when the whole step stays).
std::string narrow_given(OrderedJson& lesson, Scored& kept, const std::string& name, const Article& art,
                         const std::vector<std::size_t>& candidates, const Slack* slack) {
    std::unique_ptr<Evaluation> e;
    try {
        e = run_lesson(lesson);
    } catch (const InputError&) {
        return "";
    }
    const Step* s = e->exact.find(name);
    const OrderedJson& whole = lesson["given"][name];
    if (!s || !s->formula || s->axes.empty() || !whole.is_array() || whole.size() != s->shape[0]) return "";
    const std::string& axis = s->axes[0];
    if (axis != "query" && axis != "key" && axis != "pos") return "";  // a row per token
    const std::vector<bool> wrong = wrongly_given_cells(s->held(), {}, *s->formula);
    const std::size_t rows = s->shape[0], per_row = wrong.size() / rows;
    OrderedJson at = OrderedJson::array(), values = OrderedJson::array();
    std::string listed;
    for (std::size_t i = 0; i < rows; ++i) {
        if (std::none_of(wrong.begin() + static_cast<std::ptrdiff_t>(i * per_row),
                         wrong.begin() + static_cast<std::ptrdiff_t>((i + 1) * per_row), [](bool w) { return w; }))
            continue;
        at.push_back(i);
        values.push_back(whole[i]);
        listed += fmt::format("{}{}", listed.empty() ? "" : ", ", i);
    }
    if (at.empty() || at.size() == rows) return "";
    OrderedJson trial = lesson;
    trial["given"][name] = OrderedJson::object();
    trial["given"][name]["at"][axis] = at;
    trial["given"][name]["values"] = values;
    Scored t = score(trial, art, candidates, slack);
    if (!t.ran || t.agree < kept.agree) return "";
    lesson = std::move(trial);
    kept = std::move(t);
    return fmt::format("{} {}", axis == "pos" ? "row" : axis, listed);
}

// Each step a printed array is placed on whole, rounded at its printed decimals before the next step reads
// it, kept when more printed numbers agree (the article computed on from its rounded values).
void round_whole_steps(Refined& r, const Article& art, const std::vector<std::size_t>& candidates, const Slack* slack) {
    std::size_t tries = 0;
    for (std::size_t k = 0; k < candidates.size() && tries < kMaxChainTrials; ++k) {
        const Placement& p = r.score.placements[k];
        if (p.step.empty() || !p.whole() || !p.at.empty()) continue;
        if (r.lesson.contains("document_rounding") && r.lesson["document_rounding"].contains(p.step)) continue;
        if (r.lesson.contains("given") && r.lesson["given"].contains(p.step)) continue;
        OrderedJson trial = r.lesson;
        const int dec = decimals_of(art.arrays[candidates[k]]);
        trial["document_rounding"][p.step] = dec;
        ++tries;
        const Scored s = score(trial, art, candidates, slack);
        if (s.ran && s.agree > r.score.agree) {
            r.reasons.push_back(fmt::format("document_rounding {} at {} decimals, as printed at {} ({} more printed numbers agree)",
                                            p.step, dec, art.arrays[candidates[k]].place.describe(), s.agree - r.score.agree));
            r.steps.push_back(fmt::format("{} rounded to {}", step_leaf(p.step), dec));
            r.lesson = std::move(trial);
            r.score = s;
        }
    }
}

}  // namespace

Refined refine(OrderedJson lesson, const Article& art, const std::vector<std::size_t>& candidates) {
    Refined r;
    // the effect of the inputs' printing, measured once on the lesson as the start gives it
    const Slack rounding = input_rounding_slack(lesson);
    const Slack* slack = rounding.empty() ? nullptr : &rounding;
    r.score = score(lesson, art, candidates, slack);
    r.lesson = std::move(lesson);
    if (!r.score.ran) return r;
    // Rounding first as well: a given step may be needed only with the rounding of the steps after it
    // (Z from the article's wrong V and its weights rounded to 4 decimals).
    round_whole_steps(r, art, candidates, slack);
    // The article's chain: every printed step its formula does not give, given at once; then each taken back,
    // the latest first, unless the printed numbers of the other steps agree less without it. What stays is
    // the set the later numbers need (Q and K together, where neither alone gives a printed score).
    struct Given {
        std::string step;
        std::size_t candidate;
    };
    std::vector<Given> givens;
    for (std::size_t k = 0; k < candidates.size() && givens.size() < kMaxChainTrials; ++k) {
        const PrintedArray& a = art.arrays[candidates[k]];
        const Placement& p = r.score.placements[k];
        if (p.whole()) continue;
        // the step its name points to (a printed Q that X·W^Q does not give), else the one it was placed on
        // whole; never the input's own step (X is the input, not a step to give)
        std::string step = !step_hint(a.name).empty() ? "blocks.0.attn." + step_hint(a.name)
                           : !p.step.empty() && p.at.empty() ? p.step : "";
        if (step.empty() || step.find(".attn.") == std::string::npos) continue;
        if (r.lesson.contains("given") && r.lesson["given"].contains(step)) continue;
        if (std::any_of(givens.begin(), givens.end(), [&](const Given& g) { return g.step == step; })) continue;
        givens.push_back({step, k});
    }
    // Each printed step: given, rounded at its printed decimals (the article right but its values rounded
    // before the next step used them), or computed.
    enum class Use { given, rounded, computed };
    std::vector<Use> use(givens.size(), Use::given);
    auto decimals = [&](std::size_t g) { return decimals_of(art.arrays[candidates[givens[g].candidate]]); };
    auto with = [&](const std::vector<Use>& u) {
        OrderedJson trial = r.lesson;
        for (std::size_t g = 0; g < givens.size(); ++g) {
            if (u[g] == Use::given) trial["given"][givens[g].step] = values_json(art.arrays[candidates[givens[g].candidate]]);
            if (u[g] == Use::rounded) trial["document_rounding"][givens[g].step] = decimals(g);
        }
        return trial;
    };
    // the printed numbers that agree outside the given steps: a given step's own arrays agree with it, which proves nothing
    auto others = [&](const Scored& sc, const std::vector<Use>& u) {
        std::size_t n = 0;
        for (std::size_t j = 0; j < sc.placements.size(); ++j) {
            bool given = false;
            for (std::size_t g = 0; g < givens.size(); ++g) given = given || (u[g] == Use::given && sc.placements[j].step == givens[g].step);
            if (!given) n += sc.placements[j].agree;
        }
        return n;
    };
    if (!givens.empty()) {
        Scored all = score(with(use), art, candidates, slack);
        if (all.ran) {
            std::vector<std::size_t> needed(givens.size(), 0);
            for (std::size_t g = givens.size(); g-- > 0;) {
                // over the same arrays (g's own left out of both): what g's printed values give the steps after it
                const std::size_t have = others(all, use);
                for (Use instead : {Use::computed, Use::rounded}) {
                    std::vector<Use> trial = use;
                    trial[g] = instead;
                    const Scored t = score(with(trial), art, candidates, slack);
                    if (t.ran && others(t, use) >= have) {
                        use = std::move(trial);
                        all = t;
                        break;
                    }
                    if (instead == Use::computed) needed[g] = have - std::min(have, t.ran ? others(t, use) : 0);
                }
            }
            // kept when the printed numbers outside the given steps agree more than with nothing given or rounded
            if (others(all, use) > others(r.score, use)) {
                r.lesson = with(use);
                r.score = all;
                for (std::size_t g = 0; g < givens.size(); ++g) {
                    const std::string where = art.arrays[candidates[givens[g].candidate]].place.describe();
                    if (use[g] == Use::given) {
                        const std::string part = narrow_given(r.lesson, r.score, givens[g].step, art, candidates, slack);
                        r.reasons.push_back(fmt::format("given {}{}: the array at {} (without it, {} fewer printed numbers of other steps agree{})",
                                                        givens[g].step, part.empty() ? "" : " at " + part, where, needed[g],
                                                        part.empty() ? "" : "; its other rows are the formula's at their printed decimals"));
                        r.steps.push_back("given " + step_leaf(givens[g].step));
                    } else if (use[g] == Use::rounded) {
                        r.reasons.push_back(fmt::format("document_rounding {} at {} decimals, as printed at {} (the steps after it agree only so)",
                                                        givens[g].step, decimals(g), where));
                        r.steps.push_back(fmt::format("{} rounded to {}", step_leaf(givens[g].step), decimals(g)));
                    }
                }
            }
        }
    }
    round_whole_steps(r, art, candidates, slack);
    return r;
}

}  // namespace attntrace
