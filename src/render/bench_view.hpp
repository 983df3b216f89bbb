// `attntrace bench`'s report (bench/bench.hpp: run_bench) as text and as JSON.
#pragma once

#include <cstddef>
#include <ostream>

#include "bench/bench.hpp"
#include "trace/json_text.hpp"

namespace attntrace {

// The block's shape, the FMA peak, then per trace policy each stage's median,
// min and max, GFLOP/s and share of the peak (and, for the first policy, the
// stage's products alone against OpenBLAS). `passive_wait`: OpenMP's waiting
// threads sleep (OMP_WAIT_POLICY=PASSIVE); otherwise, with several threads
// and OpenBLAS, a note says the two pools spin against each other. `width`:
// display columns (0: no limit); the products' columns, beside the stages'
// behind a "|" when the line fits, are a table of their own below them when
// it does not.
void render_bench(std::ostream& out, const BenchReport& r, bool passive_wait, std::size_t width);
// The same as JSON: format "attntrace-bench", version 2.
OrderedJson bench_json(const BenchReport& r);
// bench --generate: the model, the threads, the prompt's windows and the
// generated tokens' (median, min and max ms per token; the first window,
// which converts the weights, apart), and as JSON (format
// "attntrace-bench-generate": every window's seconds).
void render_generate_bench(std::ostream& out, const GenerateBench& b);
OrderedJson generate_bench_json(const GenerateBench& b);

}  // namespace attntrace
