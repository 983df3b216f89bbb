// Every family declaration (model/families.cpp) is complete: a checkpoint
// made from the declaration alone (its config.json keys, its tensor names and
// shapes) loads and runs to finite numbers, with each switch on and off, and
// a checkpoint missing any one declared tensor is refused naming it. A new
// family's declaration is held here before its float64 reference exists.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "evaluate/evaluate.hpp"
#include "model/family.hpp"
#include "lesson/weights.hpp"
#include "model/hf_model.hpp"
#include "support.hpp"

using namespace attntrace;
using namespace attntrace::test;

namespace test_families {

namespace {

// Small sizes every family accepts: heads divide d_model, kv_heads divide heads, a head size of 8
// (a quarter of it, GPT-NeoX's default rotary share, is 2 dimensions: one pair).
std::size_t small(Size s) {
    switch (s) {
        case Size::d_model: return 16;
        case Size::heads: return 2;
        case Size::kv_heads: return 1;
        case Size::head_dim: return 8;
        case Size::layers: return 2;
        case Size::positions: return 16;
        case Size::vocab: return 24;
        case Size::d_ff: return 12;
        case Size::type_vocab: return 2;
        case Size::q_width: return 16;
        case Size::kv_width: return 8;
    }
    return 0;
}

struct Switches {
    bool untied = false, biases = false;
};

nlohmann::json config_of(const Family& f, Switches on) {
    nlohmann::json c = {{"model_type", f.model_type}};
    for (const SizeField& z : f.sizes) c[z.key] = small(z.size);
    if (f.tie_key) c[f.tie_key] = !on.untied;
    if (f.bias_key) c[f.bias_key] = on.biases;
    return c;
}

bool present(const TensorUse& u, const Family& f, Switches on) {
    // without a bias switch in config.json, the family's own (Phi: always with biases)
    const bool biases = f.bias_key ? on.biases : f.biases;
    switch (u.when) {
        case TensorUse::When::always: return true;
        case TensorUse::When::qkv_bias: return f.qkv_bias || biases;
        case TensorUse::When::o_bias: return biases;
        case TensorUse::When::untied: return on.untied;
    }
    return false;
}

struct Named {
    std::string name;
    std::vector<std::size_t> shape;
};

// Every tensor the declaration names for these switches, as a checkpoint saves them (no prefix).
std::vector<Named> tensors_of(const Family& f, Switches on) {
    std::vector<Named> out;
    auto add = [&](const TensorUse& u, std::string name) {
        if (!present(u, f, on)) return;
        if (name.find('/') != std::string::npos) name = name.substr(name.find('/') + 1);
        Named n{name, {}};
        for (const Extent& e : u.shape) n.shape.push_back(e.times * small(e.size));
        out.push_back(n);
    };
    for (const TensorUse& u : f.model_tensors) add(u, u.name);
    for (std::size_t b = 0; b < small(Size::layers); ++b) {
        std::string path = f.block_path;
        path.replace(path.find("{b}"), 3, std::to_string(b));
        for (const TensorUse& u : f.block_tensors) add(u, path + u.name);
    }
    return out;
}

// A safetensors file of F32 tensors with small values of both signs (1 ± 0.2 for norms' γ).
std::string safetensors_of(const std::vector<Named>& tensors) {
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    for (const Named& t : tensors) {
        std::size_t n = 1;
        for (auto e : t.shape) n *= e;
        const bool gamma = t.name.find("norm") != std::string::npos || t.name.find("ln") != std::string::npos ||
                           t.name.find("LayerNorm") != std::string::npos;
        const std::size_t begin = data.size();
        for (std::size_t i = 0; i < n; ++i) {
            const float v = (gamma ? 1.0f : 0.0f) + 0.2f * static_cast<float>(std::sin(0.7 * double(i + begin) + 1.3));
            char bytes[4];
            std::memcpy(bytes, &v, 4);
            data.append(bytes, 4);
        }
        header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    const std::string h = header.dump();
    std::string out(8, '\0');
    const std::uint64_t len = h.size();
    std::memcpy(out.data(), &len, 8);
    return out + h + data;
}

ModelInput three_ids() {
    ModelInput in;
    in.ids = {1, 2, 3};
    return in;
}

}  // namespace

TEST_CASE("a checkpoint made from each family declaration alone loads and runs to finite numbers", "[models]") {
    for (const Family& f : families()) {
        for (Switches on : {Switches{}, Switches{true, true}}) {
            INFO(f.model_type << (on.untied ? " untied, with biases" : ""));
            TempDir d;
            write_text(d.file("config.json"), config_of(f, on).dump());
            const std::vector<Named> tensors = tensors_of(f, on);
            write_text(d.file("model.safetensors"), safetensors_of(tensors));
            HfModel m = load_hf_model(d.path(), three_ids());
            CHECK(m.model_type == f.model_type);
            CHECK(m.lesson.config.arch.blocks == small(Size::layers));
            CHECK(m.lm_head() == f.lm_head);
            CHECK(m.lesson.config.arch.shared_norm == (f.shared_norm && f.parallel));  // no key turns them off in these configs
            // Every matrix and norm γ the pipeline reads for this config comes from the checkpoint
            // (a missing one would run on the lesson's default); a bias or β may be absent (zeros:
            // a family without biases), held by the float64 tests of each family.
            std::size_t provided = 0;
            for (const WeightUse& w : weight_uses(m.lesson.config)) {
                if (!weight_applies(*w.spec, m.lesson.config)) continue;
                const bool given = m.lesson.weights.count(w.name) ||
                                   (m.lesson.weight_source && m.lesson.weight_source->provides(w.name));
                INFO(w.name);
                if (w.spec->init != Fill::zeros) CHECK(given);
                provided += given;
            }
            CHECK(provided > 0);
            auto e = evaluate(std::move(m.lesson));
            std::size_t checked = 0;
            for (const Step& s : e->exact.steps) {
                if (!s.holds_values()) continue;
                INFO(s.name);
                for (float v : s.held().data) REQUIRE((std::isfinite(v) || v == -std::numeric_limits<float>::infinity()));
                ++checked;
            }
            CHECK(checked > 10);
            // the model's output: the logits, or the last block's
            CHECK(e->exact.find(f.lm_head ? "unembed" : "blocks.1.hook_resid_post") != nullptr);
        }
    }
}

TEST_CASE("a checkpoint missing any one declared tensor is refused naming it", "[models]") {
    for (const Family& f : families()) {
        const Switches on{true, true};
        const std::vector<Named> all = tensors_of(f, on);
        // the first and last of the model's own tensors and of block 1's
        for (std::size_t drop : {std::size_t{0}, all.size() / 2, all.size() - 1}) {
            INFO(f.model_type << " without " << all[drop].name);
            std::vector<Named> some = all;
            some.erase(some.begin() + static_cast<std::ptrdiff_t>(drop));
            TempDir d;
            write_text(d.file("config.json"), config_of(f, on).dump());
            write_text(d.file("model.safetensors"), safetensors_of(some));
            try {
                (void)load_hf_model(d.path(), three_ids());
                FAIL("loaded without " << all[drop].name);
            } catch (const InputError& e) {
                CHECK(std::string(e.what()).find(all[drop].name + ": expected a ") != std::string::npos);
            }
        }
    }
}

TEST_CASE("an unknown model_type is refused listing every declared family", "[models]") {
    TempDir d;
    write_text(d.file("config.json"), R"({"model_type": "t5"})");
    try {
        (void)load_hf_model(d.path(), three_ids());
        FAIL("loaded a t5 config");
    } catch (const InputError& e) {
        for (const Family& f : families()) CHECK(std::string(e.what()).find(fmt::format("\"{}\"", f.model_type)) != std::string::npos);
    }
}

}  // namespace test_families
