// Reading JSON with field paths: every accessor knows where it is
// ("weights.W_Q[2]") so that a wrong value is reported as
// "FILE: weights.W_Q[2]: expected 4 numbers, found 3".
// Shared by the lesson reader and the trace reader.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace attntrace {

using nlohmann::json;

// Bounds on user-given sizes, checked before anything is allocated.
inline constexpr std::size_t kMaxFileBytes = std::size_t{1} << 30;  // 1 GiB: a BERT-base layer inline is ~0.1 GiB
inline constexpr int kMaxJsonDepth = 64;  // lessons nest 6 deep at most; deeper is an attack or a mistake
// Memory reading a JSON file takes per byte of its text, at worst (the text
// itself and the parsed document: peak resident set of `attntrace run FILE`
// less that of a 2-byte file; Release, glibc 2.36, nlohmann 3.11.2). The
// worst shapes are empty containers, each a separate allocation, in an array
// below the top level: measured 42.6 for {"steps": [{},...]} (a trace's or
// a lesson's member), {"a": {"b": [{},...]}} and [[{},...]], 38.3 for
// {"k": [[{}],...]}; at the top level 34.2 for arrays of 60 nested empty
// arrays, 34.0 for [{},...] and [[{}],...], 33.0 for [{"":{}},...], 32.9 for
// objects nested 62 deep, 27.6 for ["",...], 23.2 for [[],...], 16.9 for
// [1,...]; numbers as written in lessons ("0.123456,") 4.8. Rounded up with
// room for allocator differences. The constant was 36 from the top-level
// shapes alone, and a trace of {"steps": [{},...]} read under the budget it
// allowed peaked 1.07-1.12x over it. A file whose worst case exceeds
// --max-memory is refused before it is read (the program's own pages,
// kBaselineBytes, are not counted here); tests/test_hostile_sizes.cpp measures each shape.
inline constexpr std::size_t kJsonBytesPerTextByte = 45;
inline constexpr std::size_t kMaxElements = std::size_t{1} << 31;  // one tensor: 8 GiB of floats

// Limits a format puts on its top-level arrays and objects, checked as the
// parser builds them: {"tokens", 1 << 20} refuses a lesson of 10 million
// tokens at token 2^20 + 1, without building the rest ("tokens: expected at
// most 1048576 elements, found more"); {"given", n} an object of more than n members.
struct JsonArrayLimit {
    const char* key;  // a member of the top-level object whose value is an array or an object
    std::size_t max_elements;  // its elements, or members
};
using JsonLimits = std::initializer_list<JsonArrayLimit>;

// Reads a whole file (refusing more than kMaxFileBytes, or more than
// max_memory_bytes() / kJsonBytesPerTextByte) and parses it; JSON
// syntax errors name the byte offset. Throws InputError.
json load_json_file(const std::string& path, JsonLimits limits = {});
json parse_json_text(const std::string& text, const std::string& file, JsonLimits limits = {});

// A short description of a JSON value for "found ..." ("string \"abc\"", "array of 3", "null").
std::string describe(const json& v);

class Fields {
public:
    explicit Fields(std::string file) : file_(std::move(file)) {}
    const std::string& file() const { return file_; }

    [[noreturn]] void fail(const std::string& path, const std::string& expected, const std::string& found,
                           ErrorKind kind = ErrorKind::invalid) const;

    // The object at path must have only these keys.
    void only_keys(const json& obj, const std::string& path,
                   std::initializer_list<const char*> allowed) const;
    void only_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) const;
    const json& object(const json& v, const std::string& path) const;
    const json& member(const json& obj, const std::string& path, const char* key) const;  // required
    const json* optional(const json& obj, const char* key) const;

    std::string string(const json& v, const std::string& path) const;
    bool boolean(const json& v, const std::string& path) const;
    double number(const json& v, const std::string& path) const;  // finite
    std::int64_t integer(const json& v, const std::string& path, std::int64_t lo,
                         std::int64_t hi) const;
    std::vector<std::string> strings(const json& v, const std::string& path,
                                     bool nonempty) const;

    // A nested array of numbers of rank 0..max_rank, rectangular, every number finite.
    // With allow_neg_inf, the string "-inf" is accepted as a number (masks, scores).
    // Lessons hold rank 3 at most; a batched trace's steps rank 4.
    Tensor tensor(const json& v, const std::string& path, bool allow_neg_inf, std::size_t max_rank = 3) const;

private:
    std::string file_;
};

// Path helpers: join("weights", "W_Q") = "weights.W_Q"; index("a", 2) = "a[2]".
std::string join(const std::string& path, const std::string& key);
std::string index(const std::string& path, std::size_t i);

}  // namespace attntrace
