// The CLI end to end on the flagship lesson, as a new user runs it.
#include <catch2/catch.hpp>

#include "support.hpp"

using attntrace::test::run_cli;

TEST_CASE("attntrace with no arguments prints the ring-fell computation with the article's numbers beside") {
    auto r = run_cli({});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    // token-labelled attention weights, computed
    CHECK(r.out.find("ring  0.1863  0.3072  0.5065") != std::string::npos);
    // the article's printed row beside ours, with its verdict
    CHECK(r.out.find("printed (2 dp): 0.19 0.31 0.51") != std::string::npos);
    CHECK(r.out.find("agrees-when-rounded") != std::string::npos);
}
