#include "check/output_size.hpp"

#include <fmt/format.h>
#include <omp.h>

#include "core/error.hpp"
#include "core/memory.hpp"

namespace attntrace {

namespace {

std::size_t add_sat(std::size_t a, std::size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
std::size_t mul_sat(std::size_t a, double b) {
    const double x = static_cast<double>(a) * b;
    return x >= static_cast<double>(SIZE_MAX) ? SIZE_MAX : static_cast<std::size_t>(x);
}

}  // namespace

std::size_t estimate_output_bytes(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, OutputKind kind) {
    const Plan plan = make_plan(lesson, policy, mode, omp_get_max_threads());
    const std::size_t floats = (plan.kept_bytes + plan.derived_bytes) / sizeof(float);  // derived steps are written too
    std::size_t steps = 0;
    for (Record r : plan.record) steps += r != Record::none;
    if (kind == OutputKind::npy) return add_sat(add_sat(plan.kept_bytes, plan.derived_bytes), steps * kNpyBytesPerStep);
    return json_output_bytes(floats, steps, lesson.tokens);
}

std::size_t json_output_bytes(std::size_t floats, std::size_t steps, const std::vector<std::string>& tokens) {
    // Labels: each kept step lists the tokens on its token axes (two at most).
    std::size_t token_text = 0;
    for (const auto& t : tokens) token_text += t.size() + 4;  // quotes, comma, space
    const std::size_t per_step = add_sat(kJsonBytesPerStep, 2 * token_text);
    return add_sat(mul_sat(floats, kJsonTextBytesPerFloat), mul_sat(steps, static_cast<double>(per_step)));
}

void refuse_output(const std::string& target, std::size_t max_bytes, std::size_t bytes, const std::string& what) {
    fail_file(target, fmt::format("an output of at most {} (--max-output)", human_bytes(max_bytes)),
              fmt::format("about {} {}", human_bytes(bytes), what));
}

void require_output_size(const Lesson& lesson, const TracePolicy& policy, Arithmetic mode, OutputKind kind,
                         std::size_t max_bytes, const std::string& target, bool policies) {
    const std::size_t bytes = estimate_output_bytes(lesson, policy, mode, kind);
    if (bytes <= max_bytes) return;
    std::string hint = "; write fewer tokens, or raise --max-output";
    if (policies) {
        for (const char* lighter : {"summary", "none"}) {
            if (policy.describe() == lighter) continue;
            const std::size_t alt = estimate_output_bytes(lesson, parse_trace_policy(lighter, "--trace"), mode, kind);
            if (alt <= max_bytes) {
                hint = fmt::format("; --trace {} fits (about {})", lighter, human_bytes(alt));
                break;
            }
        }
    }
    refuse_output(target, max_bytes, bytes,
                  fmt::format("for {} tokens with trace policy {}{}", lesson.tokens.size(), policy.describe(), hint));
}

void BoundedSink::write(std::string_view text) {
    if (text.size() > max_ - written_)
        fail_file(target_, fmt::format("an output of at most {} (--max-output)", human_bytes(max_)),
                  "more than that as it was written (stopped there)");
    written_ += text.size();
    out_.write(text);
}

}  // namespace attntrace
