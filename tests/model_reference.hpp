// What the tests of checkpoint folders (test_hf_*) share: a reference.json's
// nested arrays read flat, a tensor's largest gap to them, ids as the input,
// a folder copied to be broken.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/tensor.hpp"
#include "model/hf_model.hpp"
#include "support.hpp"
#include "trace/trace.hpp"

namespace attntrace::test {

// Nested arrays of numbers, row-major, as one list.
inline std::vector<double> flat(const nlohmann::json& j) {
    std::vector<double> out;
    if (j.is_array()) {
        for (const auto& e : j) {
            auto sub = flat(e);
            out.insert(out.end(), sub.begin(), sub.end());
        }
    } else {
        out.push_back(j.get<double>());
    }
    return out;
}

// max_i |t_i - ref_i|; the sizes must agree.
inline double max_abs_diff(const Tensor& t, const std::vector<double>& ref) {
    REQUIRE(t.size() == ref.size());
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(double(t.data[i]) - ref[i]));
    return worst;
}

// A JSON array of token ids as the model's input.
inline ModelInput ids_input(const nlohmann::json& ids) {
    ModelInput in;
    for (const auto& i : ids) in.ids.push_back(i.get<std::int64_t>());
    return in;
}

// The last row of a recorded step (the logits' (T, V): the last position's V).
inline Tensor last_row_of(const Trace& trace, const std::string& step) {
    const Step* s = trace.find(step);
    REQUIRE(s != nullptr);
    REQUIRE(s->held().size() > 0);
    const std::size_t cols = s->shape.back();
    Tensor out({cols});
    std::copy(s->held().ptr() + s->held().size() - cols, s->held().ptr() + s->held().size(), out.ptr());
    return out;
}

// Every file of a checkpoint folder copied into `to`, for a test to break one.
inline void copy_model(const std::string& from, const TempDir& to) {
    namespace fs = std::filesystem;
    for (const auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), fs::path(to.path()) / e.path().filename());
}

}  // namespace attntrace::test
