// The run's buffer pool (core/buffer_pool.hpp): a buffer given back is handed
// out again to the next take of its size, within the pool's bound, and a run
// whose steps are written into recycled buffers records the same bits as one
// whose every buffer is fresh.
#include "held_trace.hpp"

#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "core/buffer_pool.hpp"
#include "lesson/lesson.hpp"
#include "pipeline/operation.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "trace/derived.hpp"

using namespace attntrace;

namespace test_buffer_pool {
using json = nlohmann::json;

namespace {

constexpr std::size_t kFloat = sizeof(float);

// A stack of `blocks` pre-norm, causal, SwiGLU blocks with RoPE and grouped K/V heads (Llama's shape, small).
Lesson stack_of(std::size_t blocks, std::size_t T) {
    json tokens = json::array();
    for (std::size_t i = 0; i < T; ++i) tokens.push_back("t" + std::to_string(i));
    const json cfg = {{"d_model", 16},
                      {"heads", 4},
                      {"kv_heads", 2},
                      {"d_ff", 40},
                      {"blocks", blocks},
                      {"mask", "causal"},
                      {"activation", "swiglu"},
                      {"norm", "rmsnorm"},
                      {"norm_first", true},
                      {"positions", {{"kind", "rope"}, {"layout", "half"}}}};
    const json doc = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", "pool"}, {"title", "pooled buffers"},
                      {"tokens", tokens}, {"config", cfg}, {"inputs", {{"X", {{"generate", "normal"}, {"seed", 3}}}}},
                      {"weights_seed", 4}};
    return parse_lesson(doc.dump(), "pool.json");
}

Plan plan_of(const Lesson& l, const std::string& policy) {
    return make_plan(l, parse_trace_policy(policy, "--trace"), Arithmetic::exact, omp_get_max_threads());
}

// The lesson's passes, as run_planned runs them, with `check` called on the run after each.
template <class Check>
Trace run_checking(const Lesson& l, const Plan& plan, Check check) {
    Run run(l, Arithmetic::exact, plan);
    for (int p = l.first_pass; p <= l.last_pass; ++p) {
        run.begin_pass(p);
        operation(l.catalogue().passes()[static_cast<std::size_t>(p)].stage).forward(run);
        run.end_pass(p);
        check(run);
    }
    return run.finish();
}

// Every step of `a` as `b` records it: the same name, source and inputs, and the
// same bits in its values (read through its derivation where it has one) and its summary.
void require_same_trace(const Trace& a, const Trace& b) {
    REQUIRE(a.steps.size() == b.steps.size());
    for (std::size_t k = 0; k < a.steps.size(); ++k) {
        const Step& x = a.steps[k];
        const Step& y = b.steps[k];
        INFO(x.name);
        REQUIRE(x.name == y.name);
        CHECK(x.source == y.source);
        CHECK(x.inputs == y.inputs);
        CHECK(x.recorded == y.recorded);
        CHECK(is_derived(x) == is_derived(y));
        if (x.holds_values() || is_derived(x)) CHECK(same_bits(*values_of(a, x), *values_of(b, y)));
        REQUIRE(x.summary.has_value() == y.summary.has_value());
        if (x.summary) {
            CHECK(std::memcmp(&x.summary->min, &y.summary->min, sizeof(double)) == 0);
            CHECK(std::memcmp(&x.summary->max, &y.summary->max, sizeof(double)) == 0);
            CHECK(std::memcmp(&x.summary->mean, &y.summary->mean, sizeof(double)) == 0);
            CHECK(x.summary->neg_inf == y.summary->neg_inf);
            CHECK(same_bits(x.summary->row_sums, y.summary->row_sums));
            CHECK(same_bits(x.summary->corner, y.summary->corner));
        }
    }
}

}  // namespace

TEST_CASE("a buffer given back is handed out again to the next take of its size", "[pool]") {
    BufferPool pool(1 << 20);
    Tensor a = pool.take({4, 8});
    CHECK(a.shape == Shape{4, 8});
    CHECK(a.size() == 32);
    CHECK(pool.out_bytes() == 32 * kFloat);
    const float* where = a.ptr();
    pool.give(std::move(a));
    CHECK(a.size() == 0);  // given: the tensor no longer holds it
    CHECK(pool.kept_count() == 1);
    CHECK(pool.kept_bytes() == 32 * kFloat);
    CHECK(pool.out_bytes() == 0);

    SECTION("the same number of floats, in another shape: the same buffer") {
        Tensor b = pool.take({2, 16});
        CHECK(b.ptr() == where);
        CHECK(b.shape == Shape{2, 16});
        CHECK(pool.kept_count() == 0);
    }
    SECTION("another size: a fresh buffer, the kept one stays") {
        Tensor b = pool.take({4, 9});
        CHECK(b.size() == 36);
        CHECK(pool.kept_count() == 1);
    }
    SECTION("clear frees what is kept") {
        pool.clear();
        CHECK(pool.kept_count() == 0);
        CHECK(pool.kept_bytes() == 0);
    }
}

TEST_CASE("the pool never holds more than its bound, counting the buffers out", "[pool]") {
    constexpr std::size_t kBound = 100 * kFloat;
    BufferPool pool(kBound);
    Tensor a = pool.take({60}), b = pool.take({30}), c = pool.take({30});  // 120 floats out: past the bound
    pool.give(std::move(a));  // 60 out after it, + 60 kept = 120 > 100: freed
    CHECK(pool.kept_count() == 0);
    pool.give(std::move(b));  // 30 out, + 30 kept = 60: kept
    CHECK(pool.kept_bytes() == 30 * kFloat);
    pool.give(std::move(c));  // 0 out, + 60 kept: kept
    CHECK(pool.kept_bytes() == 60 * kFloat);
    CHECK(pool.kept_bytes() + pool.out_bytes() <= kBound);
    // a buffer the pool did not hand out: counted from nothing out, kept while the bound allows
    Tensor mine = Tensor::uninitialized({50});
    pool.give(std::move(mine));
    CHECK(pool.kept_bytes() == 60 * kFloat);  // 60 + 50 > 100: freed
    CHECK(pool.out_bytes() == 0);
    SECTION("a bound of 0 keeps nothing") {
        BufferPool none(0);
        Tensor t = none.take({8});
        none.give(std::move(t));
        CHECK(none.kept_count() == 0);
    }
}

TEST_CASE("a stack's steps written into recycled buffers record the same bits as into fresh ones", "[pool][memory]") {
    const Lesson l = stack_of(4, 19);
    for (const char* policy : {"summary", "full", "hook_pattern,hook_resid_post", "none"}) {
        INFO(policy);
        const Plan pooled = plan_of(l, policy);
        Plan fresh = pooled;
        fresh.step_peak_bytes = 0;  // the pool keeps nothing: every step's buffer is new
        std::size_t most_kept = 0;
        const Trace a = run_checking(l, pooled, [&](const Run& run) {
            // within the plan's estimate at every pass, counting what the steps hold
            CHECK(run.pool().kept_bytes() + run.pool().out_bytes() <= pooled.step_peak_bytes);
            most_kept = std::max(most_kept, run.pool().kept_bytes());
        });
        const Trace b = run_checking(l, fresh, [](const Run& run) { CHECK(run.pool().kept_count() == 0); });
        require_same_trace(a, b);
        if (std::string(policy) == "full") {  // every step kept, none given to the pool to be written over
            CHECK(a.find("blocks.3.hook_resid_post")->holds_values());
            CHECK(a.find("blocks.0.attn.hook_pattern")->holds_values());
            CHECK(a.find("blocks.2.mlp.hook_post")->holds_values());
        } else {  // the steps freed inside the blocks: their buffers reused
            CHECK(most_kept > 0);
        }
    }
}

}  // namespace test_buffer_pool
