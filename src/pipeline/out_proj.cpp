// Stage out: W^O mixes the heads' findings.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void out_proj_forward(Run& run) {
    const Dims& d = run.dims();
    const Tensor* z = run.value("blocks.0.attn.hook_z");
    const Tensor* W = run.weight("W_O");
    const Tensor* B = run.weight("b_O");
    // attn_out = concat(Z)·W_O + b_O   concat(Z): (Tq, C)   W_O: (C, C)
    if (float* out = run.open("blocks.0.hook_attn_out", {{"blocks.0.attn.hook_z", z}, {"weights.W_O", W}},
                              {{"weights.b_O", B}})) {
        linear(z->ptr(), W->ptr(), B ? B->ptr() : nullptr, out, d.Tq, d.C, d.C);
    }
    run.close();
}

}  // namespace attntrace
