// `attntrace bench`'s report (bench/bench.hpp: run_bench) as text and as JSON.
#pragma once

#include <ostream>

#include "bench/bench.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The block's shape, the FMA peak, then per trace policy each stage's median,
// min and max, GFLOP/s and share of the peak (and, for the first policy, the
// stage's products alone against OpenBLAS). `passive_wait`: OpenMP's waiting
// threads sleep (OMP_WAIT_POLICY=PASSIVE); otherwise, with several threads
// and OpenBLAS, a note says the two pools spin against each other.
void render_bench(std::ostream& out, const BenchReport& r, bool passive_wait);
// The same as JSON: format "attntrace-bench", version 2.
OrderedJson bench_json(const BenchReport& r);

}  // namespace attntrace
