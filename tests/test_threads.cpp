// Results do not depend on the number of threads: every kernel splits work by
// whole output tiles or rows, each computed in a fixed order.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cstring>

#include "export/trace_export.hpp"
#include "lesson/random_lesson.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;

TEST_CASE("1 and 2 threads give bit-identical traces at every step", "[threads]") {
    // Big enough to cross every parallel threshold (GEMM work, heads, softmax rows).
    RandomSpec spec;
    spec.tokens = 300;
    spec.d_model = 128;
    spec.heads = 4;
    spec.d_ff = 256;
    spec.seed = 11;
    spec.mask = MaskKind::causal;
    Lesson lesson = parse_lesson(random_lesson_json(spec).dump(), "random.json");
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    Trace one = run_lesson(lesson);
    omp_set_num_threads(2);
    Trace two = run_lesson(lesson);
    omp_set_num_threads(before);
    REQUIRE(one.steps.size() == two.steps.size());
    for (std::size_t i = 0; i < one.steps.size(); ++i) {
        INFO(one.steps[i].name);
        const Tensor& a = one.steps[i].value;
        const Tensor& b = two.steps[i].value;
        REQUIRE(a.size() == b.size());
        CHECK(std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("attntrace random writes a lesson that loads and runs, of the requested size", "[cli]") {
    test::TempDir dir;
    auto r = test::run_cli({"random", "--tokens", "5", "--d-model", "12", "--heads", "3", "--d-ff", "20", "--seed",
                            "4", "--mask", "causal", "-o", dir.file("r.json")});
    REQUIRE(r.status == 0);
    Lesson l = read_lesson(dir.file("r.json"));
    CHECK(l.tokens.size() == 5);
    CHECK(l.config.heads == 3);
    CHECK(l.config.mask == MaskKind::causal);
    auto run = test::run_cli({"run", dir.file("r.json"), "--steps", "hook_pattern"});
    CHECK(run.status == 0);
    CHECK(run.out.find("t4") != std::string::npos);
    auto bad = test::run_cli({"random", "--d-model", "10", "--heads", "3"});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("--heads") != std::string::npos);
}

TEST_CASE("1 and 2 threads give bit-identical outputs with streamed attention and the chunked FFN", "[threads]") {
    RandomSpec spec;
    spec.tokens = 530;  // several query and key blocks, three FFN chunks
    spec.d_model = 96;
    spec.heads = 3;
    spec.d_ff = 192;
    spec.seed = 12;
    spec.mask = MaskKind::causal;
    Lesson lesson = parse_lesson(random_lesson_json(spec).dump(), "random.json");
    const TracePolicy keep = parse_trace_policy("hook_z,hook_mlp_out", "--trace");
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    Trace one = run_lesson(lesson, Arithmetic::exact, keep);
    omp_set_num_threads(2);
    Trace two = run_lesson(lesson, Arithmetic::exact, keep);
    omp_set_num_threads(before);
    REQUIRE(one.streamed_attention);
    REQUIRE(one.steps.size() == 3);  // Z, the FFN's output, the block's output
    for (std::size_t i = 0; i < one.steps.size(); ++i) {
        INFO(one.steps[i].name);
        const Tensor& a = one.steps[i].value;
        const Tensor& b = two.steps[i].value;
        REQUIRE(a.size() == b.size());
        CHECK(std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0);
    }
}
