// `attntrace` with no arguments: the flagship lesson, as the README promises.
#include <catch2/catch.hpp>

#include "support.hpp"

using attntrace::test::run_cli;

namespace test_cli_default {

TEST_CASE("attntrace with no arguments prints the ring-fell computation with the article's numbers beside", "[cli]") {
    auto r = run_cli({});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    // every step of the flagship, token-labelled
    for (const char* step : {"blocks.0.hook_resid_pre", "blocks.0.attn.hook_q", "blocks.0.attn.hook_scores_raw",
                             "blocks.0.attn.hook_scores_scaled", "blocks.0.attn.softmax.hook_exp",
                             "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z"})
        CHECK(r.out.find(step) != std::string::npos);
    CHECK(r.out.find("ring  0.1863  0.3072  0.5065") != std::string::npos);
    // the article's printed row beside ours, with its verdict
    CHECK(r.out.find("printed (2 dp): 0.19 0.31 0.51") != std::string::npos);
    CHECK(r.out.find("agrees-when-rounded") != std::string::npos);
}

}  // namespace test_cli_default
