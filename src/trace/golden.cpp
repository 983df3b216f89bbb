#include "trace/golden.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace attntrace {

namespace {

std::string cell_index(const Shape& shape, std::size_t flat) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        idx[k] = flat % shape[k];
        flat /= shape[k];
    }
    return fmt::format("[{}]", fmt::join(idx, ","));
}

bool close_enough(float fresh, float golden) {
    if (std::isinf(golden) || std::isinf(fresh)) return fresh == golden;
    if (std::isnan(fresh) || std::isnan(golden)) return false;
    return std::fabs(static_cast<double>(fresh) - golden) <= kGoldenAbsTol + kGoldenRelTol * std::fabs(golden);
}

}  // namespace

std::vector<std::string> compare_traces(const TraceData& golden, const TraceData& fresh,
                                        const std::string& regenerate, std::size_t limit) {
    std::vector<std::string> out;
    std::size_t extra = 0;
    auto add = [&](std::string msg) {
        if (out.size() < limit) out.push_back(fmt::format("{}: {} (if intended: {})", golden.file, msg, regenerate));
        else ++extra;
    };
    if (golden.steps.size() != fresh.steps.size())
        add(fmt::format("golden has {} steps, the fresh trace {}", golden.steps.size(), fresh.steps.size()));
    for (std::size_t i = 0; i < std::min(golden.steps.size(), fresh.steps.size()); ++i) {
        const auto& g = golden.steps[i];
        const auto& f = fresh.steps[i];
        if (g.name != f.name) {
            add(fmt::format("step {}: golden has {}, the fresh trace {}", i, g.name, f.name));
            continue;
        }
        if (g.shape != f.shape) {
            add(fmt::format("step {}: golden shape {}, computed {}", g.name, shape_str(g.shape), shape_str(f.shape)));
            continue;
        }
        if (g.source != f.source) add(fmt::format("step {}: golden source {}, computed {}", g.name, g.source, f.source));
        if (g.recorded != f.recorded) {
            add(fmt::format("step {}: golden kept {}, the fresh trace {}", g.name, g.recorded, f.recorded));
            continue;
        }
        auto compare = [&](const Tensor& gv, const Tensor& fv, const char* what) {
            if (gv.size() != fv.size()) {
                add(fmt::format("step {}: golden has {} {}, computed {}", g.name, gv.size(), what, fv.size()));
                return;
            }
            for (std::size_t k = 0; k < gv.size(); ++k)
                if (!close_enough(fv.data[k], gv.data[k]))
                    add(fmt::format("step {}{}: golden {} {}, computed {} (|diff| {:.3g} > tolerance {:.3g})", g.name,
                                    cell_index(g.shape, k), what, gv.data[k], fv.data[k],
                                    std::fabs(static_cast<double>(fv.data[k]) - gv.data[k]),
                                    kGoldenAbsTol + kGoldenRelTol * std::fabs(gv.data[k])));
        };
        compare(g.values, f.values, "value");
        if (g.formula_values.has_value() != f.formula_values.has_value())
            add(fmt::format("step {}: formula values present in {} only", g.name, g.formula_values ? "golden" : "fresh"));
        else if (g.formula_values)
            compare(*g.formula_values, *f.formula_values, "formula value");
    }
    if (golden.claims.size() != fresh.claims.size())
        add(fmt::format("golden has {} claims, the fresh trace {}", golden.claims.size(), fresh.claims.size()));
    for (std::size_t i = 0; i < std::min(golden.claims.size(), fresh.claims.size()); ++i) {
        const auto& g = golden.claims[i];
        const auto& f = fresh.claims[i];
        if (g.id != f.id || g.verdict != f.verdict)
            add(fmt::format("claim {}: golden verdict {}, computed {} ({})", g.id, g.verdict, f.verdict, f.id));
    }
    if (extra) out.push_back(fmt::format("{}: ... and {} more differences", golden.file, extra));
    return out;
}

}  // namespace attntrace
