// Stage softmax: each row of masked scores becomes a probability distribution.
#include <fmt/format.h>

#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void softmax_forward(Run& run) {
    const Dims& d = run.dims();
    const std::string in_name = "blocks.0.attn.hook_attn_scores";
    const Tensor* x = run.value(in_name);
    // x: (NH, Tq, T) as NH·Tq rows of T   row_max, row_sum: (NH, Tq)
    float* row_max = run.open("blocks.0.attn.softmax.hook_row_max", {{in_name, x}});
    float* shifted = run.open("blocks.0.attn.softmax.hook_shifted", {{in_name, x}});
    float* e = run.open("blocks.0.attn.softmax.hook_exp", {{in_name, x}});
    float* row_sum = run.open("blocks.0.attn.softmax.hook_row_sum", {{in_name, x}});
    float* a = run.open("blocks.0.attn.hook_pattern", {{in_name, x}});
    std::size_t empty = 0;
    if (x) empty = softmax_rows(x->ptr(), d.NH * d.Tq, d.T, row_max, shifted, e, row_sum, a);
    run.close();
    if (empty)
        run.warn(fmt::format("{} row(s) of {} have every key masked: their weights are all 0 (no distribution)",
                             empty, in_name));
}

}  // namespace attntrace
