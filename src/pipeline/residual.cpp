// Operation add (stages add1 and add2): the residual connections, every add
// pass of every block; what it adds comes from the pass (catalogue.hpp).
#include "kernels/kernels.hpp"
#include "pipeline/stages.hpp"

namespace attntrace {

// out = residual + update   residual, update, out: (P, C)
void add_forward(Run& run) {
    const Pass& p = run.pass();
    const std::string &a_name = run.name(p.residual), &b_name = run.name(p.update);
    const Tensor* a = run.value(a_name);
    const Tensor* b = run.value(b_name);
    if (float* out = run.open(run.name(p.out), {{a_name, a}, {b_name, b}})) add(a->ptr(), b->ptr(), out, a->size());
    run.close();
}

// hook_resid_mid, hook_resid_post at (t, c)
float add_explain(Cell& c) {
    // The pass names what it adds: X + attn_out, LN1 + FFN in the post-norm encoder (catalogue.hpp).
    const Step& a = c.input(c.pass().residual);
    const Step& b = c.input(c.pass().update);
    const float x = get(a, {c.at[0], c.at[1]}), y = get(b, {c.at[0], c.at[1]});
    const std::string where = fmt::format("[{},d{}]", Cell::label(c.step, 0, c.at[0]), c.at[1]);
    c.line("{}{} + {}{} = {} + {}", a.name, where, b.name, where, c.num(x), c.num(y));
    c.line("  = {}", c.num(x + y));
    return x + y;
}

}  // namespace attntrace
