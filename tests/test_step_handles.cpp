// Steps named by typed handles (trace/steps.hpp Leaf) outside the step table:
// `computes` matches a step of any block and sub-block by what it computes and
// a foreign trace's step by its template name; which steps a config records
// and which positions a step needs are decided by the leaf.
#include <catch2/catch.hpp>

#include "lesson/lesson.hpp"
#include "pipeline/run.hpp"
#include "support.hpp"
#include "trace/trace.hpp"

using namespace attntrace;

namespace test_step_handles {

TEST_CASE("computes matches a step of any block and sub-block by its leaf", "[handles]") {
    const Lesson lesson = read_lesson(test::lessons_dir() + "/001-cross-attention.json");
    const Trace trace = run_lesson(lesson);
    const Catalogue& cat = lesson.catalogue();
    const Step* self = trace.find(cat.step(Leaf::pattern, 0, false).name);
    const Step* cross = trace.find(cat.step(Leaf::pattern, 0, true).name);
    REQUIRE(self);
    REQUIRE(cross);
    REQUIRE(self != cross);
    for (const Step* s : {self, cross}) {
        CHECK(computes(*s, Leaf::pattern));
        CHECK_FALSE(computes(*s, Leaf::mask));
    }
    // Every recorded step computes exactly its own leaf.
    for (const Step& s : trace.steps) {
        REQUIRE(s.def);
        CHECK(computes(s, s.def->leaf));
        CHECK_FALSE(computes(s, s.def->leaf == Leaf::z ? Leaf::pattern : Leaf::z));
    }
}

TEST_CASE("a foreign trace's step computes a leaf only under the template's name", "[handles]") {
    Step foreign;
    foreign.name = default_catalogue().step(Leaf::attn_scores).name;  // as a numpy trace would name it
    CHECK(computes(foreign, Leaf::attn_scores));
    CHECK_FALSE(computes(foreign, Leaf::pattern));
    foreign.name = "my_scores";
    CHECK_FALSE(computes(foreign, Leaf::attn_scores));
}

TEST_CASE("a config records the norm and FFN steps its kinds have, and positions their own steps", "[handles]") {
    Config c;
    c.norm = NormKind::layernorm;
    c.activation = Activation::relu;
    CHECK(config_records(c, Leaf::ln_mean));
    CHECK(config_records(c, Leaf::ln_var));
    CHECK_FALSE(config_records(c, Leaf::ln_mean_square));
    CHECK_FALSE(config_records(c, Leaf::mlp_pre_linear));
    c.norm = NormKind::rmsnorm;
    c.activation = Activation::swiglu;
    CHECK_FALSE(config_records(c, Leaf::ln_mean));
    CHECK(config_records(c, Leaf::ln_mean_square));
    CHECK(config_records(c, Leaf::mlp_pre_linear));
    CHECK(config_records(c, Leaf::pattern));

    CHECK(position_step_applies(PositionKind::rope, Leaf::rot_q));
    CHECK_FALSE(position_step_applies(PositionKind::alibi, Leaf::rot_k));
    CHECK(position_step_applies(PositionKind::alibi, Leaf::alibi_slopes));
    CHECK_FALSE(position_step_applies(PositionKind::none, Leaf::pos_embed));
    CHECK(position_step_applies(PositionKind::learned, Leaf::pos_embed));
    CHECK(position_step_applies(PositionKind::none, Leaf::q));
    CHECK(position_step_kind(Leaf::pos_embed) == "sinusoidal or learned");
    CHECK(position_step_kind(Leaf::pattern).empty());
}

}  // namespace test_step_handles
