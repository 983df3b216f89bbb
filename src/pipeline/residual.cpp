// Stages add1 and add2: the residual connections (every add pass of every block).
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

namespace {

// out = residual + update   residual, update, out: (T, C)   (names from the pass: catalogue.hpp)
void residual(Run& run, const std::string& step, const std::string& a_name, const std::string& b_name) {
    const Tensor* a = run.value(a_name);
    const Tensor* b = run.value(b_name);
    if (float* out = run.open(step, {{a_name, a}, {b_name, b}})) add(a->ptr(), b->ptr(), out, a->size());
    run.close();
}

}  // namespace

void add_forward(Run& run) { residual(run, run.pass().out, run.pass().residual, run.pass().update); }

}  // namespace attntrace
