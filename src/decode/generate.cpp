#include "decode/generate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <omp.h>

#include "core/error.hpp"
#include "kernels/crew.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "trace/derived.hpp"

namespace attntrace {

GenerateRefusal generate_refusal(const HfModel& m, std::int64_t n) {
    if (!m.lm_head())
        return {"a causal model with a next-token head (GPT-2, the Llama family)",
                fmt::format("model_type \"{}\" (not causal: no next token)", m.model_type)};
    if (n < 1 || n > static_cast<std::int64_t>(kMaxGenerate)) return {fmt::format("a count from 1 to {}", kMaxGenerate), fmt::format("{}", n)};
    const std::size_t T = m.lesson.token_ids.size(), N = static_cast<std::size_t>(n);
    if (T + N > m.max_positions)
        return {fmt::format("the prompt plus the generated tokens within config.json's {} ({})", m.positions_field,
                            m.max_positions),
                fmt::format("{} + {} = {} tokens", T, N, T + N)};
    return {};
}

namespace {

// The last row of step `name` in `trace`: (1, C) (or (1, V) of the logits).
Tensor last_row(const Trace& trace, const std::string& name) {
    const Step* s = trace.find(name);
    if (!s || !s->holds_values()) throw std::logic_error("generate: " + name + " not in the trace");
    const Tensor& v = s->held();
    const std::size_t rows = s->shape.at(0), C = v.size() / rows;
    Tensor out(Shape{1, C});
    std::copy_n(v.ptr() + (rows - 1) * C, C, out.ptr());
    return out;
}

}  // namespace

Generation generate(HfModel& m, std::int64_t n, std::size_t k, const Sampling& s,
                    const std::function<void(std::size_t)>& after) {
    if (const GenerateRefusal r = generate_refusal(m, n); !r.expected.empty()) fail_file("--generate", r.expected, r.found);
    if (const SamplingRefusal r = sampling_refusal(s); !r.flag.empty()) fail_file(r.flag, r.expected, r.found);
    const auto count = static_cast<std::size_t>(n);  // 1..kMaxGenerate, checked above
    Lesson& lesson = m.lesson;
    const Catalogue& cat = lesson.catalogue();
    const std::string& x_name = cat.step(Leaf::resid_pre).name;
    const std::string& logits_name = cat.step(Leaf::logits, -1).name;  // unembed: (T, V)
    const int threads = omp_get_max_threads();
    Generation g;
    g.sampling = s;
    g.prompt = lesson.token_ids;
    TokenSampler sampler(s);
    // every weight converted once for all the tokens, when the budget has room beside a run's plan over the
    // prompt (a window, one row against the cache, holds less)
    const HeldWeights weights(lesson, make_plan(lesson, TracePolicy{}, Arithmetic::exact, threads).peak_bytes);
    KeyCache cache;
    Trace window;
    // Every window is one row against the weights (GEMVs): the threads are kept awake between them, a crew
    // for the whole loop (kernels/crew.hpp), instead of woken for each product.
    Crew::run(threads, [&] {
    // The prompt, one row at a time as decode runs it: each token's keys and values join the caches.
    {
        const Plan plan = make_plan(lesson, TracePolicy{}, Arithmetic::exact, threads);
        const Trace embedded = run_embeddings(lesson, plan);
        const Step& X = *embedded.find(x_name);  // (T, C)
        for (std::size_t t = 0; t < lesson.token_ids.size(); ++t) {
            window = run_window(lesson, plan, RowWindow{t, 1, &cache}, window_slice(X.held(), Shape{1, X.shape[1]}, X.axes, t));
            cache.reclaim(window, cat);
            if (after) after(t);
        }
    }
    for (std::size_t i = 0; i < count; ++i) {
        // the logits of the last row (1, V); the next token is their argmax (ties: the lower id, as next_tokens
        // orders), or drawn from them
        const Tensor logits = last_row(window, logits_name);
        GeneratedToken tok;
        tok.t = lesson.token_ids.size();
        // (the softmax over the vocabulary computed once: 50257 exponentials are ~0.4 ms of a token)
        const std::vector<double> p = next_token_probabilities(logits.ptr(), logits.size());
        tok.top = next_tokens(logits.ptr(), logits.size(), std::max<std::size_t>(k, 1), p);
        tok.draw = sampler.draw(logits.ptr(), logits.size());
        const NextToken drawn = tok.draw.kept.at(tok.draw.index);
        tok.chosen = {drawn.id, drawn.logit, p[static_cast<std::size_t>(drawn.id)]};
        tok.logits.assign(logits.ptr(), logits.ptr() + logits.size());
        lesson.token_ids.push_back(tok.chosen.id);
        lesson.tokens.push_back(m.label(tok.chosen.id));
        // not in the text the model read: an empty span at its end (core/token_span.hpp)
        if (!lesson.token_spans.empty()) lesson.token_spans.push_back({lesson.text.size(), lesson.text.size()});
        // The new token through the embeddings' pass (its row: W_E[id], + W_P[t] with learned positions), then
        // through every block as one row against the caches: its window, traced as decode traces a step.
        const Plan plan = make_plan(lesson, TracePolicy{}, Arithmetic::exact, threads);
        const Trace embedded = run_embeddings(lesson, plan);
        window = run_window(lesson, plan, RowWindow{tok.t, 1, &cache}, last_row(embedded, x_name));
        materialise(window);  // its derived steps (one query row each) as buffers, for window_step
        tok.window = window_step(lesson, window, tok.t);
        cache.reclaim(window, cat);
        if (after) after(tok.t);
        g.tokens.push_back(std::move(tok));
    }
    });
    for (const std::string& piece : lesson.tokens) g.text += piece;
    if (m.tokenizer) {
        std::vector<std::int64_t> generated;
        for (const GeneratedToken& t : g.tokens) generated.push_back(t.chosen.id);
        g.decoded = m.tokenizer->decode(lesson.token_ids);
        g.continuation = m.tokenizer->decode(generated);
    }
    return g;
}

}  // namespace attntrace
