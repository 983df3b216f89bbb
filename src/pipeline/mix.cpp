// Stage mix: each query's new vector is the attention-weighted sum of the values.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void mix_forward(Run& run) {
    const Dims& d = run.dims();
    const Tensor* a = run.value("blocks.0.attn.hook_pattern");
    const Tensor* v = run.value("blocks.0.attn.hook_v");
    // Z_h = A_h·V_h   A_h: (Tq, T)   V_h: (T, hs) at v + h·hs, stride C   Z_h: (Tq, hs) at z + h·hs, stride C
    // Writing each head into its own columns of Z is the concatenation.
    if (float* z = run.open("blocks.0.attn.hook_z",
                            {{"blocks.0.attn.hook_pattern", a}, {"blocks.0.attn.hook_v", v}})) {
        // One head per thread, writing disjoint columns of Z (see scores.cpp).
        const bool parallel = d.NH > 1 && 2.0 * d.Tq * d.T * d.C > 4.0e6;
#pragma omp parallel for schedule(static) if (parallel)
        for (std::size_t h = 0; h < d.NH; ++h)
            matmul(a->ptr() + h * d.Tq * d.T, d.T, v->ptr() + h * d.hs, d.C, z + h * d.hs, d.C, d.Tq, d.T,
                       d.hs);
    }
    run.close();
}

}  // namespace attntrace
