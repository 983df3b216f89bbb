#include "core/json_field.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/closest.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/json_parse.hpp"
#include "core/memory.hpp"

namespace attntrace {

json parse_json_text(const std::string& text, const std::string& file, JsonLimits limits) {
    if (text.empty()) fail_at(file, 0, "a JSON document", "an empty file");
    return parse_json_document(text, file, limits);
}

json load_json_file(const std::string& path, JsonLimits limits) {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) fail_file(path, "a readable file", "no such file");
    if (fs::is_directory(status)) fail_file(path, "a file", "a directory");
    // A FIFO, device or socket: refused from its type, before opening it could wait for a writer.
    if (const std::string kind = non_regular_kind(status.type()); !kind.empty()) fail_file(path, "a regular file", kind);
    auto size = fs::file_size(path, ec);
    if (ec) fail_file(path, "a readable file", "one whose size cannot be read");
    if (size > kMaxFileBytes)
        fail_file(path, fmt::format("at most {} bytes", kMaxFileBytes), fmt::format("{} bytes", size));
    if (size > max_memory_bytes() / kJsonBytesPerTextByte)
        fail_file(path,
                  fmt::format("a file whose parsed JSON fits the memory limit of {} (--max-memory; up to {} bytes "
                              "per byte of JSON)", human_bytes(max_memory_bytes()), kJsonBytesPerTextByte),
                  human_bytes(size) + " of JSON");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_file(path, "a readable file", "one that cannot be opened");
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::size_t>(in.gcount()) != size)
        fail_file(path, "to read the whole file", "it shorter than its size");
    return parse_json_text(text, path, limits);
}

std::string describe(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
        case json::value_t::string: {
            auto s = v.get<std::string>();
            if (s.size() > 24) {
                // Cut at a character boundary: half a UTF-8 sequence would
                // make dump() throw (found by fuzzing: fuzz-regressions/lesson/).
                std::size_t cut = 21;
                while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
                s = s.substr(0, cut) + "...";
            }
            // Quoted and escaped: a newline stays "\n".
            return "string " + json(s).dump(-1, ' ', false, json::error_handler_t::replace);
        }
        case json::value_t::array: return fmt::format("an array of {}", v.size());
        case json::value_t::object: return "an object";
        case json::value_t::number_float: return v.dump();  // as written: 1.0, not 1
        case json::value_t::number_integer: return fmt::format("{}", v.get<std::int64_t>());
        case json::value_t::number_unsigned: return fmt::format("{}", v.get<std::uint64_t>());
        default: return "an unsupported value";
    }
}

std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}
std::string index(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

void Fields::fail(const std::string& path, const std::string& expected, const std::string& found,
                  ErrorKind kind) const {
    fail_field(file_, path.empty() ? "(top level)" : path, expected, found, kind);
}

void Fields::only_keys(const json& obj, const std::string& path,
                       std::initializer_list<const char*> allowed) const {
    only_keys(obj, path, std::vector<std::string>(allowed.begin(), allowed.end()));
}

void Fields::only_keys(const json& obj, const std::string& path, const std::vector<std::string>& names) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (const std::string& a : names) ok = ok || it.key() == a;
        if (!ok)
            fail(join(path, it.key()), fmt::format("one of the known fields ({})", fmt::join(names, ", ")),
                 "an unknown field" + closest_note(closest_names(it.key(), names)), ErrorKind::unknown_field);
    }
}

const json& Fields::object(const json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "an object", describe(v));
    return v;
}

const json& Fields::member(const json& obj, const std::string& path, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "a value", "nothing (the field is missing)", ErrorKind::missing_field);
    return *it;
}

const json* Fields::optional(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

std::string Fields::string(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "a string", describe(v));
    return v.get<std::string>();
}

bool Fields::boolean(const json& v, const std::string& path) const {
    if (!v.is_boolean()) fail(path, "true or false", describe(v));
    return v.get<bool>();
}

double Fields::number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "a number", describe(v));
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, "a finite number", "a number out of range");
    return d;
}

std::int64_t Fields::integer(const json& v, const std::string& path, std::int64_t lo,
                             std::int64_t hi) const {
    std::string range = fmt::format("an integer from {} to {}", lo, hi);
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(hi) || (lo > 0 && u < static_cast<std::uint64_t>(lo)))
            fail(path, range, describe(v));
        return static_cast<std::int64_t>(u);
    }
    if (!v.is_number_integer()) fail(path, range, describe(v));
    auto i = v.get<std::int64_t>();
    if (i < lo || i > hi) fail(path, range, describe(v));
    return i;
}

std::vector<std::string> Fields::strings(const json& v, const std::string& path, bool nonempty) const {
    if (!v.is_array()) fail(path, "an array of strings", describe(v));
    if (nonempty && v.empty()) fail(path, "at least one string", "an empty array");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], index(path, i)));
    return out;
}

Tensor Fields::tensor(const json& v, const std::string& path, bool allow_neg_inf, std::size_t max_rank) const {
    // Shape from the first element at each depth; then every element is checked.
    Shape shape;
    const json* probe = &v;
    std::string probe_path = path;
    while (probe->is_array()) {
        if (shape.size() == max_rank) fail(path, fmt::format("an array nested at most {} deep", max_rank), "deeper nesting");
        if (probe->empty()) fail(probe_path, "a non-empty array", "an empty array");
        shape.push_back(probe->size());
        probe = &(*probe)[0];
        probe_path = index(probe_path, 0);
    }
    std::size_t n = 0;
    if (!checked_numel(shape, kMaxElements, n))
        fail(path, fmt::format("at most {} numbers", kMaxElements), "more");
    // Walk in row-major order, checking each level's length against the shape
    // and each number; with `out`, also store the numbers. The path of a cell
    // ("W_Q[2][1]") is only spelled out when it is wrong.
    std::vector<std::size_t> at(shape.size(), 0);  // the index being walked, one per axis
    auto where = [&](std::size_t depth) {
        std::string p = path;
        for (std::size_t k = 0; k < depth; ++k) p = index(p, at[k]);
        return p;
    };
    auto walk = [&](auto&& self, const json& node, std::size_t depth, float*& out) -> void {
        if (depth == shape.size()) {
            float x = 0;
            if (node.is_string() && allow_neg_inf && node.get<std::string>() == "-inf") {
                x = kNegInf;
            } else {
                if (!node.is_number())
                    fail(where(depth), allow_neg_inf ? "a number or \"-inf\"" : "a number", describe(node));
                double d = node.get<double>();
                // Values are float32: 1e39 is a finite double but an infinite float.
                if (!std::isfinite(d) || !std::isfinite(static_cast<float>(d)))
                    fail(where(depth), "a finite number within float range (|x| < 3.4e38)", describe(node));
                x = static_cast<float>(d);
            }
            if (out) *out++ = x;
            return;
        }
        if (!node.is_array())
            fail(where(depth), fmt::format("an array of {}", shape[depth]), describe(node));
        if (node.size() != shape[depth])
            fail(where(depth), fmt::format("an array of {} (as the first row)", shape[depth]),
                 fmt::format("an array of {}", node.size()));
        for (at[depth] = 0; at[depth] < node.size(); ++at[depth]) self(self, node[at[depth]], depth + 1, out);
    };
    // Check everything before allocating: the shape comes from the first row
    // at each depth only, so a few bytes of ragged JSON ([[[0,0,...1000], 0,
    // ...], 0, ...]) would otherwise ask for 1000^3 floats before the second
    // row is seen to be wrong. Once the walk passes, the JSON holds all n
    // numbers, so the buffer is bounded by the file's size.
    float* none = nullptr;
    walk(walk, v, 0, none);
    Tensor t = Tensor::uninitialized(shape);
    float* out = t.data.data();
    walk(walk, v, 0, out);
    return t;
}

}  // namespace attntrace
