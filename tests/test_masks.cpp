// Mask patterns (config.mask objects, pipeline/mask_pattern.hpp): each kind
// against small patterns worked out by hand from its definition in
// docs/lesson-format.md; the invariants of a run under every kind (blocked
// weights exactly 0, rows summing to 1, no NaN); rows with every key blocked
// (zero weights, zero Z, a warning naming them); the window of `cost` and the
// mask's window counting the same keys; the lessons and explain end to end.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "cost/cost.hpp"
#include "pipeline/mask_pattern.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_masks {
using json = nlohmann::json;

namespace {

// float32 sums of a few weights in [0, 1]: a row sums to 1 within a few ulp.
constexpr double kRowSumTol = 1e-6;

json tokens_of(std::size_t T) {
    json t = json::array();
    for (std::size_t i = 0; i < T; ++i) t.push_back("t" + std::to_string(i));
    return t;
}

// A lesson of T tokens with this mask, random (seeded) inputs and weights, embed..mix.
json lesson_doc(const json& mask, json tokens, std::size_t heads = 2) {
    return {{"format", "attntrace-lesson"},
            {"version", 1},
            {"id", "masks"},
            {"title", "mask test"},
            {"source", {{"document", "tests"}}},
            {"tokens", tokens},
            {"config", {{"d_model", 4}, {"heads", heads}, {"mask", mask}}},
            {"run", {{"from", "embed"}, {"to", "mix"}}},
            {"inputs", {{"X", {{"generate", "normal"}, {"seed", 3}}}}},
            {"weights_seed", 3}};
}

Lesson lesson_with(const json& mask, std::size_t T, std::size_t heads = 2) {
    return parse_lesson(lesson_doc(mask, tokens_of(T), heads).dump(), "masks.json");
}

// The pattern as rows of '1' (visible) and '0' (blocked), rows joined by ' '.
std::string pattern(const Lesson& l) {
    const Dims d = l.dims();
    MaskPattern p(l.config, d.Tq, d.T);
    std::string s;
    for (std::size_t i = 0; i < d.Tq; ++i) {
        if (i) s += ' ';
        for (std::size_t j = 0; j < d.T; ++j) s += p.allows(i, j) ? '1' : '0';
    }
    return s;
}

std::string refusal(const json& doc) { return attntrace::test::lesson_refusal(doc.dump(), "bad.json"); }

}  // namespace

TEST_CASE("mask patterns by hand: window, causal window, global + local, block-sparse, padding, custom", "[masks]") {
    // symmetric window 3: |p - j| <= 1
    CHECK(pattern(lesson_with({{"kind", "window"}, {"window", 3}}, 5)) == "11000 11100 01110 00111 00011");
    // window 5: |p - j| <= 2
    CHECK(pattern(lesson_with({{"kind", "window"}, {"window", 5}}, 5)) == "11100 11110 11111 01111 00111");
    // window 1: only itself
    CHECK(pattern(lesson_with({{"kind", "window"}, {"window", 1}}, 3)) == "100 010 001");
    // causal window 2: keys p-1..p
    CHECK(pattern(lesson_with({{"kind", "window"}, {"window", 2}, {"causal", true}}, 4)) == "1000 1100 0110 0011");
    // global + local, window 1, position 2 global: its row sees all, every row sees its column
    CHECK(pattern(lesson_with({{"kind", "global_local"}, {"window", 1}, {"global", {2}}}, 4)) ==
          "1010 0110 1111 0011");
    // global given by token string
    CHECK(pattern(lesson_with({{"kind", "global_local"}, {"window", 1}, {"global", {"t0"}}}, 3)) == "111 110 101");
    // blocks of 2 over 5 positions ({0,1} {2,3} {4}); summary first: 0, 2, 4
    CHECK(pattern(lesson_with({{"kind", "block_sparse"}, {"block", 2}}, 5)) == "11101 11101 10111 10111 10101");
    // summary last: 1, 3 and the short last block's own last token 4
    CHECK(pattern(lesson_with({{"kind", "block_sparse"}, {"block", 2}, {"summary", "last"}}, 5)) ==
          "11011 11011 01111 01111 01011");
    // key padding: the pad key blocked in every row, the pad query still sees the real keys
    CHECK(pattern(lesson_with({{"kind", "padding"}, {"pad", {1}}}, 3)) == "101 101 101");
    CHECK(pattern(lesson_with({{"kind", "padding"}, {"pad", {1}}, {"causal", true}}, 3)) == "100 100 101");
    CHECK(pattern(lesson_with({{"kind", "padding"}, {"pad_token", "t2"}}, 3)) == "110 110 110");
    // custom, 0/1 and booleans
    CHECK(pattern(lesson_with({{"kind", "custom"}, {"allowed", {{1, 0}, {true, false}}}}, 2)) == "10 10");
    // the two strings
    CHECK(pattern(lesson_with("causal", 3)) == "100 110 111");
    CHECK(pattern(lesson_with("none", 2)) == "11 11");
}

TEST_CASE("with fewer queries than keys the queries are the last positions, for every positional kind", "[masks]") {
    Config c;
    c.mask = MaskKind::window;
    c.mask_spec.window = 3;
    MaskPattern w(c, 2, 4);  // queries at positions 2 and 3
    CHECK(w.position(0) == 2);
    CHECK((!w.allows(0, 0) && w.allows(0, 1) && w.allows(0, 2) && w.allows(0, 3)));
    CHECK((!w.allows(1, 1) && w.allows(1, 2) && w.allows(1, 3)));
    c.mask = MaskKind::padding;
    c.mask_spec = {};
    c.mask_spec.pad = {0};
    c.mask_spec.causal = true;
    MaskPattern p(c, 1, 3);  // query at position 2
    CHECK((!p.allows(0, 0) && p.allows(0, 1) && p.allows(0, 2)));
}

TEST_CASE("a mask pattern keeps its own rule: the config it was made from may change or end", "[masks]") {
    // Made from a temporary: the config is gone after this statement (a
    // reference to it dangled before MaskPattern copied what it needs).
    const MaskPattern from_temporary = [] {
        Config c;
        c.mask = MaskKind::global_local;
        c.mask_spec.window = 3;
        c.mask_spec.global = {0};
        return MaskPattern(c, 4, 4);
    }();
    CHECK(from_temporary.allows(3, 0));   // key 0 is global
    CHECK(from_temporary.allows(0, 3));   // query 0 is global
    CHECK(!from_temporary.allows(3, 1));  // outside the window, neither global
    CHECK(from_temporary.reason(3, 0, "d", "a")[1] == "key position 0 is global: every row sees it");
    // The config changed after: the pattern still follows the rule it was made with.
    Config c;
    c.mask = MaskKind::custom;
    c.mask_spec.allowed = {1, 0, 1, 1};
    const MaskPattern custom(c, 2, 2);
    c.mask = MaskKind::none;
    c.mask_spec = {};
    CHECK((custom.allows(0, 0) && !custom.allows(0, 1) && custom.allows(1, 0) && custom.allows(1, 1)));
}

TEST_CASE("a run under every mask kind: blocked weights exactly 0, rows sum to 1, nothing NaN", "[masks]") {
    const std::size_t T = 9;
    const json masks[] = {
        "none",
        "causal",
        {{"kind", "window"}, {"window", 3}},
        {{"kind", "window"}, {"window", 4}, {"causal", true}},
        {{"kind", "global_local"}, {"window", 3}, {"global", {0, 5}}},
        {{"kind", "block_sparse"}, {"block", 4}, {"summary", "last"}},
        {{"kind", "padding"}, {"pad", {7, 8}}, {"causal", true}},
    };
    for (const json& mask : masks) {
        INFO("mask " << mask.dump());
        const Lesson l = lesson_with(mask, T);
        const Trace t = run_lesson(l);
        CHECK(t.warnings.empty());
        const Tensor& m = t.find("blocks.0.attn.hook_mask")->held();
        const Tensor& a = t.find("blocks.0.attn.hook_pattern")->held();
        MaskPattern rule(l.config, T, T);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < T; ++i) {
                double sum = 0;
                for (std::size_t j = 0; j < T; ++j) {
                    const float w = a.data[(h * T + i) * T + j];
                    REQUIRE(std::isfinite(w));
                    CHECK(m.data[i * T + j] == (rule.allows(i, j) ? 0.0f : -INFINITY));
                    if (!rule.allows(i, j)) CHECK(w == 0.0f);
                    sum += w;
                }
                CHECK(std::fabs(sum - 1.0) <= kRowSumTol);
            }
        for (float z : t.find("blocks.0.attn.hook_z")->held().data) REQUIRE(std::isfinite(z));
    }
}

TEST_CASE("rows with every key blocked: zero weights, zero Z, a warning naming the rows, no NaN", "[masks]") {
    // left padding with the causal mask: queries 0 and 1 are pads that see only pads
    const Lesson l = lesson_with({{"kind", "padding"}, {"pad", {0, 1}}, {"causal", true}}, 4);
    // custom: row 1 sees nothing
    const Lesson c = lesson_with({{"kind", "custom"}, {"allowed", {{1, 1, 0}, {0, 0, 0}, {1, 0, 1}}}}, 3);
    for (const auto& [lesson, empty_rows] : {std::pair{&l, std::vector<std::size_t>{0, 1}}, {&c, {1}}}) {
        const Dims d = lesson->dims();
        for (const char* policy : {"full", "none"}) {
            INFO("policy " << policy);
            const Trace t = run_lesson(*lesson, Arithmetic::exact, parse_trace_policy(policy, "--trace"));
            CHECK(!t.streamed_attention);  // these kinds run materialised
            REQUIRE(t.warnings.size() == 1);
            CHECK(t.warnings[0].find(std::to_string(empty_rows.size() * d.NH) + " row(s)") != std::string::npos);
            for (std::size_t i : empty_rows)
                CHECK(t.warnings[0].find("head 1 query " + std::to_string(i) + " \"t" + std::to_string(i) + "\"") !=
                      std::string::npos);
            const Tensor& z = t.find("blocks.0.attn.hook_z")->held();  // (Tq, NH, hs)
            for (std::size_t i = 0; i < d.Tq; ++i)
                for (std::size_t e = 0; e < d.C; ++e) {
                    const float v = z.data[i * d.C + e];
                    REQUIRE(std::isfinite(v));
                    if (std::find(empty_rows.begin(), empty_rows.end(), i) != empty_rows.end()) CHECK(v == 0.0f);
                }
            if (std::string(policy) == "full") {
                const Tensor& a = t.find("blocks.0.attn.hook_pattern")->held();
                for (std::size_t h = 0; h < d.NH; ++h)
                    for (std::size_t i : empty_rows)
                        for (std::size_t j = 0; j < d.T; ++j) CHECK(a.data[(h * d.Tq + i) * d.T + j] == 0.0f);
            }
        }
    }
}

TEST_CASE("none, causal and windows stream, while the other kinds run materialised", "[masks]") {
    const TracePolicy none = parse_trace_policy("none", "--trace");
    CHECK(make_plan(lesson_with("causal", 4), none, Arithmetic::exact, 1).stream_attention);
    CHECK(make_plan(lesson_with("none", 4), none, Arithmetic::exact, 1).stream_attention);
    CHECK(make_plan(lesson_with({{"kind", "window"}, {"window", 3}}, 4), none, Arithmetic::exact, 1).stream_attention);
    CHECK(make_plan(lesson_with({{"kind", "window"}, {"window", 2}, {"causal", true}}, 4), none, Arithmetic::exact, 1)
              .stream_attention);
    CHECK_FALSE(make_plan(lesson_with({{"kind", "global_local"}, {"window", 1}, {"global", {0}}}, 4), none,
                          Arithmetic::exact, 1).stream_attention);
    CHECK_FALSE(make_plan(lesson_with({{"kind", "block_sparse"}, {"block", 2}}, 4), none, Arithmetic::exact, 1)
                    .stream_attention);
    CHECK_FALSE(make_plan(lesson_with({{"kind", "padding"}, {"pad", {3}}}, 4), none, Arithmetic::exact, 1).stream_attention);
}

TEST_CASE("cost's window and the mask's window count the same keys for every odd w", "[masks][cost]") {
    for (std::size_t w : {1, 3, 5, 7, 11}) {
        for (std::size_t T : {1, 4, 9}) {
            const Lesson l = lesson_with({{"kind", "window"}, {"window", w}}, T);
            MaskPattern p(l.config, T, T);
            const Lesson lc = lesson_with({{"kind", "window"}, {"window", w}, {"causal", true}}, T);
            MaskPattern pc(lc.config, T, T);
            for (std::size_t i = 0; i < T; ++i) {
                std::size_t seen = 0, seen_causal = 0;
                for (std::size_t j = 0; j < T; ++j) seen += p.allows(i, j), seen_causal += pc.allows(i, j);
                INFO("w " << w << " T " << T << " query " << i);
                CHECK(seen == keys_seen(Window::symmetric, w, T, i));
                CHECK(seen_causal == keys_seen(Window::causal_window, w, T, i));
            }
        }
    }
}

TEST_CASE("bad masks are refused naming the field path", "[masks][bad-input]") {
    auto bad = [](const json& mask, std::size_t T = 4) { return refusal(lesson_doc(mask, tokens_of(T))); };
    CHECK_THAT(bad({{"kind", "window"}, {"window", 4}}), Catch::Contains("config.mask.window") && Catch::Contains("odd"));
    CHECK_THAT(bad({{"kind", "window"}, {"window", 0}}), Catch::Contains("config.mask.window"));
    CHECK_THAT(bad({{"kind", "window"}}), Catch::Contains("config.mask.window") && Catch::Contains("missing"));
    CHECK_THAT(bad({{"kind", "window"}, {"window", 3}, {"block", 2}}), Catch::Contains("config.mask.block"));
    CHECK_THAT(bad({{"kind", "diagonal"}}), Catch::Contains("config.mask.kind"));
    CHECK_THAT(bad({{"window", 3}}), Catch::Contains("config.mask.kind"));
    CHECK_THAT(bad(json::array()), Catch::Contains("config.mask"));
    CHECK_THAT(bad({{"kind", "global_local"}, {"window", 3}, {"global", {4}}}), Catch::Contains("config.mask.global[0]"));
    CHECK_THAT(bad({{"kind", "global_local"}, {"window", 3}, {"global", {1, 1}}}),
               Catch::Contains("config.mask.global[1]") && Catch::Contains("once"));
    CHECK_THAT(bad({{"kind", "global_local"}, {"window", 3}, {"global", {"zz"}}}),
               Catch::Contains("config.mask.global[0]") && Catch::Contains("not a token"));
    CHECK_THAT(refusal(lesson_doc({{"kind", "padding"}, {"pad", {"a"}}}, {"a", "b", "a"})),
               Catch::Contains("config.mask.pad[0]") && Catch::Contains("2 tokens"));
    CHECK_THAT(bad({{"kind", "padding"}}), Catch::Contains("config.mask") && Catch::Contains("neither"));
    CHECK_THAT(bad({{"kind", "padding"}, {"pad", {0}}, {"pad_token", "x"}}), Catch::Contains("both"));
    CHECK_THAT(bad({{"kind", "block_sparse"}, {"block", 0}}), Catch::Contains("config.mask.block"));
    CHECK_THAT(bad({{"kind", "block_sparse"}, {"block", 2}, {"summary", "middle"}}), Catch::Contains("config.mask.summary"));
    CHECK_THAT(bad({{"kind", "custom"}, {"allowed", {{1, 0}, {1, 1}}}}), Catch::Contains("config.mask.allowed"));
    CHECK_THAT(bad({{"kind", "custom"}, {"allowed", {{1, 0}, {1, 2}}}}, 2), Catch::Contains("config.mask.allowed[1][1]"));
    CHECK_THAT(bad({{"kind", "custom"}, {"allowed", {{1, 0}, {1}}}}, 2), Catch::Contains("config.mask.allowed[1]"));
}

TEST_CASE("mask lessons end to end: check agrees with every expected verdict, explain says why a cell is blocked",
          "[masks][cli]") {
    using attntrace::test::run_cli;
    for (const char* id : {"004-sliding-window", "004-global-local", "004-block-sparse", "001-causal-mask-code",
                           "001-padding-mask", "001-padding-causal"}) {
        INFO(id);
        const auto r = run_cli({"check", id});
        CHECK(r.status == 0);
        CHECK(r.out.find("every verdict as its lesson expects") != std::string::npos);
    }
    const auto e = run_cli({"explain", "004-sliding-window", "blocks.0.attn.hook_mask[4,6]"});
    CHECK(e.status == 0);
    CHECK(e.out.find("|4 - 6| = 2, outside") != std::string::npos);
    CHECK(e.out.find("-inf") != std::string::npos);
    const auto run = run_cli({"run", "004-sliding-window", "--steps", "hook_mask"});
    CHECK(run.out.find("mask window 3 (|p - j| <= 1)") != std::string::npos);
    // left padding + causal: the pad rows have every key masked, and the run says which
    const auto pad = run_cli({"run", "001-padding-causal", "--steps", "hook_pattern"});
    CHECK(pad.status == 0);
    const std::string both = attntrace::test::unwrapped(pad.out + pad.err);  // the warning wrapped to the width
    CHECK(both.find("warning: 4 row(s)") != std::string::npos);
    CHECK(both.find("head 1 query 1 \"<pad>\"") != std::string::npos);
    CHECK(both.find(" nan") == std::string::npos);  // fmt prints a NaN as "nan" or "-nan"
    CHECK(both.find("-nan") == std::string::npos);
}

}  // namespace test_masks
