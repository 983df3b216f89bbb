// Stage out: W^O mixes the heads' findings.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void out_proj_forward(Run& run) {
    const Dims& d = run.dims();
    const Tensor* z = run.value(run.name(Leaf::z));
    const Tensor* W = run.weight("W_O");
    const Tensor* B = run.weight("b_O");
    // attn_out = concat(Z)·W_O + b_O   concat(Z): (Tq, C)   W_O: (C, C)
    if (float* out = run.open(run.pass().attn_out, {{run.name(Leaf::z), z}, {run.wpath("W_O"), W}},
                              {{run.wpath("b_O"), B}})) {
        linear(z->ptr(), W->ptr(), B ? B->ptr() : nullptr, out, d.Tq, d.C, d.C);
    }
    run.close();
}

}  // namespace attntrace
