// config.positions -> Positions, every mistake named by its field path.
#include "lesson/positions_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "lesson/config_fields.hpp"

namespace attntrace {

Positions read_positions(const Fields& f, const json& v, const Dims& dims) {
    const std::string path = "config.positions";
    const char* kinds = "\"none\", \"sinusoidal\", \"learned\", {\"kind\": \"rope\", ...} or {\"kind\": \"alibi\", ...}";
    Positions p;
    std::string kind;
    if (v.is_string()) {
        kind = v.get<std::string>();
        // RoPE has two conventions and the lesson must pick one; ALiBi has options: objects only.
        if (kind == "rope")
            f.fail(path, "{\"kind\": \"rope\", \"layout\": \"half\" or \"interleaved\"} (the two RoPE conventions "
                         "differ: pick one)", describe(v));
        if (kind == "alibi") f.fail(path, "{\"kind\": \"alibi\"} (an object, with optional \"slopes\")", describe(v));
    } else if (v.is_object()) {
        kind = f.string(f.member(v, path, "kind"), join(path, "kind"));
    } else {
        f.fail(path, kinds, describe(v));
    }
    const std::string kind_path = v.is_object() ? join(path, "kind") : path;
    // the kinds' spellings: config_fields.cpp ("rope" and "alibi" alone were refused above)
    if (auto k = spelling_value(position_kinds(), kind)) p.kind = static_cast<PositionKind>(*k);
    else f.fail(kind_path, kinds, describe(v.is_object() ? v["kind"] : v));
    if (p.kind == PositionKind::sinusoidal) p.layout = RopeLayout::interleaved;  // the paper's, unless the object says
    if (!v.is_object()) return p;

    switch (p.kind) {
        case PositionKind::sinusoidal: {
            f.only_keys(v, path, {"kind", "layout"});
            if (auto* layout = f.optional(v, "layout")) {
                const std::string lp = join(path, "layout");
                const std::string l = f.string(*layout, lp);
                if (l == "half") p.layout = RopeLayout::half;
                else if (l != "interleaved")
                    f.fail(lp, "\"interleaved\" (sin in d = 2i, cos in 2i+1: the paper's) or \"half\" (sin in d = i, cos in "
                               "C/2 + i)", describe(*layout));
                if (p.layout == RopeLayout::half && dims.C % 2 != 0)
                    f.fail("config.d_model", "an even d_model for sinusoidal positions in halves (sin and cos of each angle)",
                           fmt::format("{}", dims.C));
            }
            break;
        }
        case PositionKind::rope: {
            f.only_keys(v, path, {"kind", "layout", "base", "rotary_dims"});
            const std::string lp = join(path, "layout");
            const json& layout = f.member(v, path, "layout");
            const std::string l = f.string(layout, lp);
            if (l == "half") p.layout = RopeLayout::half;
            else if (l == "interleaved") p.layout = RopeLayout::interleaved;
            else
                f.fail(lp, "\"half\" (pairs i, i+hs/2: GPT-NeoX, HF Llama) or \"interleaved\" (pairs 2i, 2i+1: "
                           "RoFormer, GPT-J, Meta Llama)", describe(layout));
            if (auto* b = f.optional(v, "base")) {
                p.base = f.number(*b, join(path, "base"));
                if (!(p.base > 1 && p.base <= kMaxRopeBase))
                    f.fail(join(path, "base"), fmt::format("a number above 1 and at most {:g}", kMaxRopeBase),
                           describe(*b));
            }
            if (auto* r = f.optional(v, "rotary_dims")) {
                // GPT-NeoX's rotary_pct: the first rotary_dims of each head rotated, in pairs
                const std::string rp = join(path, "rotary_dims");
                p.rotary_dims = static_cast<std::size_t>(f.integer(*r, rp, 2, static_cast<std::int64_t>(std::max<std::size_t>(dims.hs, 2))));
                if (p.rotary_dims % 2 != 0)
                    f.fail(rp, fmt::format("an even number from 2 to the head size {} (RoPE rotates pairs)", dims.hs),
                           describe(*r));
                if (p.rotary_dims == dims.hs) p.rotary_dims = 0;  // every dimension: the plain rotation
            }
            // RoPE turns pairs of dimensions: an odd head size leaves one without a partner.
            if (dims.hs % 2 != 0 && !p.rotary_dims) {
                const bool split = dims.NH * dims.hs == dims.C && dims.C % dims.NH == 0;  // no config.d_k
                f.fail(split ? "config" : "config.d_k", "an even head size for RoPE (it rotates pairs of dimensions)",
                       split ? fmt::format("d_model {} / heads {} = {}", dims.C, dims.NH, dims.hs)
                             : fmt::format("{}", dims.hs));
            }
            break;
        }
        case PositionKind::alibi: {
            f.only_keys(v, path, {"kind", "slopes"});
            if (auto* s = f.optional(v, "slopes")) {
                const std::string sp = join(path, "slopes");
                if (!s->is_array()) f.fail(sp, fmt::format("an array of {} slopes (one per head)", dims.NH), describe(*s));
                if (s->size() != dims.NH)
                    f.fail(sp, fmt::format("{} slopes (one per head)", dims.NH), fmt::format("{}", s->size()));
                for (std::size_t h = 0; h < s->size(); ++h) {
                    const double m = f.number((*s)[h], index(sp, h));
                    if (!(m >= 0 && m <= kMaxAlibiSlope))
                        f.fail(index(sp, h), fmt::format("a slope from 0 to {:g}", kMaxAlibiSlope), describe((*s)[h]));
                    p.slopes.push_back(m);
                }
            }
            break;
        }
        default: f.only_keys(v, path, {"kind"});
    }
    return p;
}

}  // namespace attntrace
