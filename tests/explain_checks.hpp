// What tests of an operation's explanation hold it to: each cell explained
// from an evaluated lesson's trace recomputes the value the trace holds.
#pragma once

#include <catch2/catch.hpp>

#include <vector>

#include "evaluate/evaluate.hpp"
#include "render/explain.hpp"

namespace attntrace::test {

inline void require_recomputed(const Evaluation& e, const std::vector<CellRef>& cells) {
    for (const CellRef& cell : cells) {
        INFO(cell.step);
        const Explanation x = explain_cell(e.lesson, e.exact, cell, {});
        REQUIRE(x.recomputed);
        CHECK(*x.recomputed == x.traced);
    }
}

}  // namespace attntrace::test
