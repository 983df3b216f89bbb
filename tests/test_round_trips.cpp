// Every export reads back, for every lesson of lessons/ (one sequence,
// batches, stacks of blocks, decoders): the JSON trace (`export -o`) through
// the complete reader the goldens use, the npy folder (`export --npy`)
// through its reader, each under the full and summary policies and both arithmetics,
// the two holding the same steps and values; and `diff` of either against
// itself or the other finds every step equal.
#include <catch2/catch.hpp>
#include <string>

#include "export/npy_export.hpp"
#include "lesson/lesson.hpp"
#include "support.hpp"
#include "trace/trace_json.hpp"

using attntrace::test::CliResult;
using attntrace::test::run_cli;
using attntrace::test::TempDir;

namespace test_round_trips {

namespace {

// Both readings of one export hold the same steps, shapes and values.
void require_same(const attntrace::TraceData& json, const attntrace::TraceData& npy) {
    REQUIRE(json.steps.size() == npy.steps.size());
    for (std::size_t i = 0; i < json.steps.size(); ++i) {
        const auto &a = json.steps[i], &b = npy.steps[i];
        INFO(a.name);
        CHECK(a.name == b.name);
        CHECK(a.shape == b.shape);
        CHECK(a.recorded == b.recorded);
        CHECK(a.source == b.source);
        CHECK(a.values.shape == b.values.shape);
        CHECK(a.values.data == b.values.data);  // the JSON's shortest round-trip text gives the float back exactly
        REQUIRE(a.formula_values.has_value() == b.formula_values.has_value());
        if (a.formula_values) CHECK(a.formula_values->data == b.formula_values->data);
    }
}

}  // namespace

TEST_CASE("every lesson's exports read back: JSON and npy, full and summary, both arithmetics, and diff agrees",
          "[npy][diff]") {
    bool batch = false, stack = false, decoder = false;
    for (const auto& file : attntrace::test::lesson_files()) {
        const attntrace::Lesson lesson = attntrace::read_lesson(file);
        batch = batch || lesson.batch.has_value();
        stack = stack || lesson.config.arch.blocks > 1;
        decoder = decoder || lesson.config.arch.decoder;
        for (const char* policy : {"full", "summary"}) {  // none keeps the output only: full covers it
            for (const std::string arithmetic : {"exact", "document"}) {
                if (arithmetic == "document" && lesson.document_rounding.empty()) continue;  // refused: nothing rounded
                INFO(file << " --trace " << policy << " --arithmetic " << arithmetic);
                TempDir dir;
                const std::string json = dir.file("t.json"), npy = dir.file("t-npy");
                const CliResult e = run_cli({"export", file, "-o", json, "--npy", npy, "--trace", policy,
                                             "--arithmetic", arithmetic});
                INFO(e.err);
                REQUIRE(e.status == 0);
                const attntrace::TraceData from_json = attntrace::read_trace_file(json);
                const attntrace::TraceData from_npy = attntrace::read_npy_export(npy);
                CHECK(from_json.lesson_id == lesson.id);
                CHECK(from_npy.lesson_id == lesson.id);
                require_same(from_json, from_npy);
                if (std::string(policy) != "full") continue;  // summaries hold nothing diff compares
                for (const auto& [a, b] : {std::pair{json, json}, {npy, npy}, {json, npy}, {npy, json}}) {
                    const CliResult d = run_cli({"diff", a, b});
                    INFO(d.err << d.out.substr(0, 400));
                    CHECK(d.status == 0);
                }
            }
        }
    }
    // The sweep covers every kind of lesson there is.
    CHECK(batch);
    CHECK(stack);
    CHECK(decoder);
}

}  // namespace test_round_trips
