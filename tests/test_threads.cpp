// Results do not depend on the number of threads: every kernel splits work by
// whole output tiles or rows, each computed in a fixed order.
#include <catch2/catch.hpp>
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "export/trace_export.hpp"
#include "lesson/random_lesson.hpp"
#include "held_trace.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"

using namespace attntrace;

namespace test_threads {

namespace {

Lesson random_lesson(std::size_t tokens, std::size_t d_model, std::size_t heads, std::size_t d_ff,
                     std::uint64_t seed) {
    RandomSpec spec;
    spec.tokens = tokens;
    spec.d_model = d_model;
    spec.heads = heads;
    spec.d_ff = d_ff;
    spec.seed = seed;
    spec.mask = MaskKind::causal;
    return parse_lesson(random_lesson_json(spec).dump(), "random.json");
}

// The lesson's trace on 1 and on 2 threads.
// ffn_rows > 0: the FFN streamed that many rows at a time (run_ffn_chunks).
std::pair<Trace, Trace> one_and_two(const Lesson& lesson, const TracePolicy& policy, std::size_t ffn_rows = 0) {
    const int before = omp_get_max_threads();
    auto run = [&] { return ffn_rows ? run_ffn_chunks(lesson, policy, ffn_rows) : run_lesson(lesson, Arithmetic::exact, policy); };
    omp_set_num_threads(1);
    Trace one = run();
    omp_set_num_threads(2);
    Trace two = run();
    omp_set_num_threads(before);
    return {std::move(one), std::move(two)};
}

void require_identical(const Trace& one, const Trace& two) {
    REQUIRE(one.steps.size() == two.steps.size());
    for (std::size_t i = 0; i < one.steps.size(); ++i) {
        INFO(one.steps[i].name);
        // A derived step's values are computed here (trace/derived.hpp): threads change neither.
        const StepValues av = values_of(one, one.steps[i]), bv = values_of(two, two.steps[i]);
        const Tensor& a = *av;
        const Tensor& b = *bv;
        REQUIRE(a.size() == b.size());
        if (a.size()) CHECK(std::memcmp(a.ptr(), b.ptr(), a.size() * sizeof(float)) == 0);
    }
}

}  // namespace

TEST_CASE("1 and 2 threads give bit-identical traces at every step", "[threads]") {
    // Big enough to cross every parallel threshold (GEMM work, heads, softmax rows).
    auto [one, two] = one_and_two(random_lesson(300, 128, 4, 256, 11), {});
    require_identical(one, two);
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
    // 530 tokens: several query and key blocks, three FFN chunks.
    auto [one, two] = one_and_two(random_lesson(530, 96, 3, 192, 12), parse_trace_policy("hook_z,hook_mlp_out", "--trace"), 256);
    REQUIRE(one.streamed_attention);
    REQUIRE(one.steps.size() == 3);  // Z, the FFN's output, the block's output
    require_identical(one, two);
}

namespace {

// The spin count libgomp runs with, from its OMP_DISPLAY_ENV=VERBOSE report
// (the last one: the program may start twice); "" when absent.
// The wait policy the OpenMP runtime reports last (OMP_DISPLAY_ENV=VERBOSE):
// libgomp writes "OMP_WAIT_POLICY = 'PASSIVE'", LLVM's libomp (which clang's
// builds link, as CI's sanitizer build) "OMP_WAIT_POLICY='PASSIVE'".
std::string running_wait_policy(const std::string& err) {
    for (const std::string key : {"OMP_WAIT_POLICY = '", "OMP_WAIT_POLICY='"}) {
        const std::size_t at = err.rfind(key);
        if (at == std::string::npos) continue;
        const std::size_t from = at + key.size();
        return err.substr(from, err.find('\'', from) - from);
    }
    return "";
}

// libgomp's spin count (GOMP_SPINCOUNT), which only libgomp has.
std::string running_spin_count(const std::string& err) {
    const std::string key = "GOMP_SPINCOUNT = '";
    const std::size_t at = err.rfind(key);
    if (at == std::string::npos) return "";
    const std::size_t from = at + key.size();
    return err.substr(from, err.find('\'', from) - from);
}

// Unsets a variable for the scope (the tests' own environment may set it), restoring it after.
class Unset {
public:
    explicit Unset(const char* name) : name_(name) {
        if (const char* v = std::getenv(name)) old_ = v, had_ = true;
        unsetenv(name);
    }
    ~Unset() {
        if (had_) setenv(name_, old_.c_str(), 1);
    }
    Unset(const Unset&) = delete;
    Unset& operator=(const Unset&) = delete;
private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

}  // namespace

TEST_CASE("waiting threads sleep unless the user chose how they wait (OMP_WAIT_POLICY, GOMP_SPINCOUNT)", "[threads][cli]") {
    const Unset policy("OMP_WAIT_POLICY"), spin("GOMP_SPINCOUNT");
    // Real processes: libgomp reads its environment once, when a process starts.
    // Neither set: the program sets OMP_WAIT_POLICY=PASSIVE where libgomp reads it, so it spins 0 rounds.
    auto r = test::run_process({"--version"}, {"OMP_DISPLAY_ENV=VERBOSE"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("attntrace ") == 0);
    CHECK(running_wait_policy(r.err) == "PASSIVE");
    const bool libgomp = r.err.find("GOMP_SPINCOUNT") != std::string::npos;
#ifdef _LIBGOMP_OMP_LOCK_DEFINED
    REQUIRE(libgomp);  // this file's omp.h is libgomp's: so is the runtime the binary reports
#endif
    if (libgomp) CHECK(running_spin_count(r.err) == "0");
    // The user's choice stands, and the program starts once.
    const std::string once = "OPENMP DISPLAY ENVIRONMENT BEGIN";
    r = test::run_process({"--version"}, {"OMP_DISPLAY_ENV=VERBOSE", "OMP_WAIT_POLICY=ACTIVE"});
    CHECK(running_wait_policy(r.err) == "ACTIVE");
    if (libgomp) CHECK(running_spin_count(r.err) != "0");
    CHECK(r.err.find(once) == r.err.rfind(once));
    if (libgomp) {
        r = test::run_process({"--version"}, {"OMP_DISPLAY_ENV=VERBOSE", "GOMP_SPINCOUNT=1234"});
        CHECK(running_spin_count(r.err) == "1234");
        CHECK(r.err.find(once) == r.err.rfind(once));
    }
    // Arguments reach the program that runs: a command's output, not only --version.
    r = test::run_process({"--threads", "2", "list"});
    CHECK(r.status == 0);
    CHECK(r.out.find("003-3.1-ring-fell") != std::string::npos);
}

}  // namespace test_threads
