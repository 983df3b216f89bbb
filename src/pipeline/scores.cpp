// Stage scores: every query against every key, per head.
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

void scores_forward(Run& run) {
    const Dims& d = run.dims();
    // With RoPE the scores read the rotated Q and K (rope.cpp).
    const bool rope = run.config().positions.kind == PositionKind::rope;
    const std::string qn = run.name(scores_query(rope));
    const std::string kn = run.name(scores_key(rope));
    const Tensor* q = run.value(qn);
    const Tensor* k = run.value(kn);
    // S_h = Q_h·K_gᵀ, g = h / (NH/KVH)   Q_h: (Tq, hs) at q + h·hs, row stride C
    //   K_g: (T, hs) at k + g·hs, row stride KVH·hs   S_h: (Tq, T)
    if (float* s = run.open(run.name(Leaf::scores_raw), {{qn, q}, {kn, k}})) {
        // One head per thread (each GEMM then runs on its thread): heads write
        // disjoint planes, so the result does not depend on the thread count.
        const bool parallel = d.NH > 1 && 2.0 * d.Tq * d.T * d.C > 4.0e6;
#pragma omp parallel for schedule(static) if (parallel)
        for (std::size_t h = 0; h < d.NH; ++h)
            matmul_nt(q->ptr() + h * d.hs, d.C, k->ptr() + d.kv_of(h) * d.hs, d.KVH * d.hs, s + h * d.Tq * d.T,
                      d.T, d.Tq, d.hs, d.T);
    }
    run.close();
}

}  // namespace attntrace
