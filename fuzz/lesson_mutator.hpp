// A structure-aware mutation of a lesson (docs/fuzzing.md): the input is
// parsed as JSON, one node is picked and changed the way a lesson can be
// wrong (a number at a limit, a known key added or removed, an enum value or
// step name swapped, a row made ragged, a value of another type), and the
// document is written back. A byte mutator rarely keeps a lesson valid JSON
// that differs in one deep field; this one always does, so the readers'
// field checks, the run and the renderers all see its inputs.
//
// Header-only and free of libFuzzer, so that the tests hold it to what it
// promises (tests/test_fuzz_mutator.cpp); fuzz_lesson.cpp calls it from
// LLVMFuzzerCustomMutator in the libFuzzer build.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace attntrace::fuzz {

// Numbers at the edges the readers and the pipeline guard: sizes around the
// SIMD lanes and the format's limits (2^16 d_model, 2^18 d_ff, 2^20 tokens,
// 2^31 elements), and floats near their ends (denormals, FLT_MAX and past it).
inline const std::vector<double>& interesting_numbers() {
    static const std::vector<double> v = {0, -0.0, 1, -1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 0.5, -0.5,
                                          1e-5, 1e-45, 1.17549435e-38, 3.4028234e38, 3.5e38, -3.4028234e38, 1e300,
                                          65536, 65537, 262144, 262145, 1048576, 1048577, 4096, 4097,
                                          2147483647.0, 2147483648.0, 4294967296.0, -2147483649.0, 1e12, 1e13};
    return v;
}

// Strings the lesson format gives meaning to: enum values, stage and step
// names, axis names, and text a terminal or a file system cares about.
inline const std::vector<std::string>& interesting_strings() {
    static const std::vector<std::string> v = {
        "attntrace-lesson", "attntrace-cost-lesson", "none", "causal", "relu", "gelu", "gelu_tanh", "swiglu", "dyt",
        "layernorm", "rmsnorm", "rope", "alibi", "sinusoidal", "learned", "half", "interleaved", "normal", "zeros",
        "ones", "identity", "window", "global_local", "block_sparse", "padding", "custom", "first", "last", "both",
        "neither", "agrees", "disagrees", "agrees_when_rounded", "not_checkable", "row_sum", "values", "-inf", "inf",
        "nan", "embed", "qkv", "scores", "scale", "mask", "softmax", "mix", "out", "add1", "norm1", "ffn", "add2",
        "norm2", "query", "key", "head", "kv_head", "pos", "d_model", "d_head", "d_ff", "batch",
        "blocks.0.attn.hook_q", "blocks.0.attn.hook_k", "blocks.0.attn.hook_v", "blocks.0.attn.hook_scores_raw",
        "blocks.0.attn.hook_scores_scaled", "blocks.0.attn.hook_mask", "blocks.0.attn.hook_attn_scores",
        "blocks.0.attn.softmax.hook_row_max", "blocks.0.attn.softmax.hook_exp", "blocks.0.attn.softmax.hook_row_sum",
        "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z", "blocks.0.hook_attn_out", "blocks.0.hook_resid_pre",
        "blocks.0.hook_resid_mid", "blocks.0.hook_resid_post", "blocks.0.ln1.hook_mean", "blocks.0.ln1.hook_var",
        "blocks.0.mlp.hook_pre", "blocks.0.mlp.hook_post", "blocks.0.hook_mlp_out", "blocks.1.attn.hook_pattern",
        "blocks.63.attn.hook_q", "blocks.0.cross_attn.hook_pattern", "blocks.0.attn.hook_rot_q",
        "blocks.0.attn.hook_alibi", "hook_embed", "hook_pos_embed", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "W_3",
        "b_Q", "gamma1", "beta1", "W.npy", "../x.npy", "/dev/zero", "", " ", "\x1b[2J", "\n", "é√Σ",
        std::string(300, 'a')};
    return v;
}

// Every key the lesson format has, anywhere (docs/lesson-format.md).
inline const std::vector<std::string>& lesson_keys() {
    static const std::vector<std::string> v = {
        "format", "version", "id", "title", "source", "description", "tokens", "query_tokens", "token_ids",
        "memory_tokens", "config", "run", "inputs", "weights", "weights_seed", "given", "document_rounding",
        "claims", "batch", "document", "section", "d_model", "heads", "kv_heads", "d_ff", "mask", "scale",
        "activation", "norm", "eps", "positions", "blocks", "norm_first", "decoder", "from", "to", "X",
        "embedding", "memory", "generate", "seed", "std", "npy", "kind", "window", "causal", "global", "block",
        "summary", "pad", "pad_token", "pad_id", "pad_x", "sequences", "allowed", "layout", "base", "slopes", "step",
        "at", "of", "decimals", "values", "shape", "expect", "quote", "note", "W_Q", "W_K", "W_V", "W_O", "W_1",
        "W_2", "W_3", "blocks.0.attn.hook_q", "blocks.0.attn.hook_pattern", "weight_layout", "divide_by",
        "multiply_by", "normalizer", "max_shift", "variance"};
    return v;
}

namespace detail {

using json = nlohmann::json;

// Every node of `doc`, outermost first (the root included), as pointers that
// stay valid until the document changes.
inline void collect(json& node, std::vector<json*>& out) {
    out.push_back(&node);
    if (node.is_array() || node.is_object())
        for (auto& child : node) collect(child, out);
}

inline json some_value(std::mt19937& rng, const std::vector<json*>& nodes) {
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    switch (pick(6)) {
        case 0: return interesting_numbers()[pick(interesting_numbers().size())];
        case 1: return interesting_strings()[pick(interesting_strings().size())];
        case 2: return *nodes[pick(nodes.size())];  // a value from elsewhere in the lesson: a real row, a real name
        case 3: return json::array();
        case 4: return json::object();
        default: return pick(2) ? json(nullptr) : json(true);
    }
}

}  // namespace detail

// One structure-aware mutation of `text` chosen by `seed`, or nothing when
// `text` is not JSON (the caller then mutates bytes). The result is always
// valid JSON and, when it fits, at most `max_size` bytes.
inline std::optional<std::string> mutate_lesson(std::string_view text, std::uint32_t seed,
                                                std::size_t max_size = std::size_t(-1)) {
    using detail::json;
    json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return std::nullopt;
    std::mt19937 rng(seed);
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    std::vector<json*> nodes;
    detail::collect(doc, nodes);
    json& node = *nodes[pick(nodes.size())];
    const auto& numbers = interesting_numbers();
    const auto& strings = interesting_strings();
    if (pick(8) == 0) {
        node = detail::some_value(rng, nodes);  // any node: a value of another type
    } else if (node.is_number()) {
        const double x = node.get<double>();
        switch (pick(5)) {
            case 0: node = x + 1; break;
            case 1: node = x - 1; break;
            case 2: node = -x; break;
            case 3: node = x * 1e30; break;
            default: node = numbers[pick(numbers.size())];
        }
        // 3.0 -> 3: an integer field stays an integer (the range first: a cast of 1e30 would be undefined).
        if (const double y = node.get<double>(); node.is_number_float() && std::abs(y) < 9e15 && y == std::trunc(y))
            node = static_cast<std::int64_t>(y);
    } else if (node.is_string()) {
        node = strings[pick(strings.size())];
    } else if (node.is_boolean()) {
        node = !node.get<bool>();
    } else if (node.is_array()) {
        const std::size_t n = node.size();
        switch (n == 0 ? 4 : pick(7)) {
            case 0: node.erase(pick(n)); break;                     // one element fewer: a ragged row, a missing token
            case 1: {  // one more, a copy
                json copy = node[pick(n)];
                node.push_back(std::move(copy));
                break;
            }
            case 2: {
                json copy = node[pick(n)];
                node.insert(node.begin() + static_cast<std::ptrdiff_t>(pick(n)), std::move(copy));
                break;
            }
            case 3: std::swap(node[pick(n)], node[pick(n)]); break;
            case 4: node.push_back(detail::some_value(rng, nodes)); break;
            case 5: {  // one level deeper
                json inner = std::move(node);
                node = json::array({std::move(inner)});
                break;
            }
            default: node = json::array(); break;
        }
    } else if (node.is_object()) {
        std::vector<std::string> keys;
        for (auto it = node.begin(); it != node.end(); ++it) keys.push_back(it.key());
        const auto& known = lesson_keys();
        switch (keys.empty() ? 1 : pick(4)) {
            case 0: node.erase(keys[pick(keys.size())]); break;     // a required field missing
            case 1: node[known[pick(known.size())]] = detail::some_value(rng, nodes); break;  // a field added
            case 2: {                                               // a field renamed to another known one
                const std::string from = keys[pick(keys.size())];
                json v = node[from];
                node.erase(from);
                node[known[pick(known.size())]] = std::move(v);
                break;
            }
            default: node[keys[pick(keys.size())]] = detail::some_value(rng, nodes); break;
        }
    } else {
        node = detail::some_value(rng, nodes);
    }
    // Compact or indented as the lessons are, so both layouts stay in the corpus.
    std::string out = doc.dump(pick(2) ? -1 : 2, ' ', false, json::error_handler_t::replace);
    if (out.size() > max_size) return std::nullopt;
    return out;
}

}  // namespace attntrace::fuzz
