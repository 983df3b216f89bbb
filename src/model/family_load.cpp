// Any family's checkpoint as a lesson: its declaration's tensors checked,
// budgeted and mapped onto the lesson's weights, the same way for all.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "io/safetensors.hpp"
#include "model/family.hpp"
#include "model/family_load.hpp"
#include "model/hf_model.hpp"

namespace attntrace {

namespace {

// Columns [c0, c1) of a (rows, cols) matrix, or entries of a vector: a fused tensor's part.
Tensor columns(const Tensor& m, std::size_t c0, std::size_t c1) {
    if (m.rank() == 1) {
        Tensor out = Tensor::uninitialized({c1 - c0});
        std::copy(m.ptr() + c0, m.ptr() + c1, out.ptr());
        return out;
    }
    const std::size_t rows = m.shape[0], cols = m.shape[1];
    Tensor out = Tensor::uninitialized({rows, c1 - c0});
    for (std::size_t r = 0; r < rows; ++r)
        std::copy(m.ptr() + r * cols + c0, m.ptr() + r * cols + c1, out.ptr() + r * (c1 - c0));
    return out;
}

// The columns of part `part` of `parts` when each of `heads` heads holds its parts side by side.
Tensor columns_of_heads(const Tensor& m, std::size_t heads, std::size_t part, std::size_t parts) {
    const std::size_t cols = m.shape.back(), width = cols / (heads * parts), rows = m.rank() == 1 ? 1 : m.shape[0];
    Tensor out = Tensor::uninitialized(m.rank() == 1 ? Shape{heads * width} : Shape{rows, heads * width});
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t h = 0; h < heads; ++h)
            std::copy(m.ptr() + r * cols + (h * parts + part) * width, m.ptr() + r * cols + (h * parts + part + 1) * width,
                      out.ptr() + r * heads * width + h * width);
    return out;
}

bool present(const TensorUse& u, const ModelSizes& z) {
    switch (u.when) {
        case TensorUse::When::always: return true;
        case TensorUse::When::qkv_bias: return z.qkv_bias;
        case TensorUse::When::o_bias: return z.o_bias;
        case TensorUse::When::untied: return !z.tied;
    }
    return false;
}

std::string with_block(const char* pattern, std::size_t b) {
    std::string s = pattern;
    if (auto at = s.find("{b}"); at != std::string::npos) s.replace(at, 3, std::to_string(b));
    return s;
}

// One checkpoint tensor as the run reads it: its name, stored shape, role and use.
struct Read {
    std::string tensor;
    Shape shape;
    std::string role;
    const TensorUse* use;
    std::size_t heads = 0;  // for a split head by head
};

// The lesson's value of part `part` of a tensor read whole: transposed from
// nn.Linear's layout, then its columns split among the use's names.
Tensor take(const Checkpoint& ck, const Read& r, std::size_t part) {
    Tensor t = ck.get(r.tensor, r.shape, r.role);
    if (r.use->layout == TensorUse::Layout::linear) t = transposed(t);
    const std::size_t parts = r.use->into.size();
    if (parts == 1) return t;
    if (r.use->split == TensorUse::Split::per_head) return columns_of_heads(t, r.heads, part, parts);
    const std::size_t width = t.shape.back() / parts;
    return columns(t, part * width, (part + 1) * width);
}

// Part `part` of a tensor as the products may read it in place (the GEMM
// widening it as it packs: kernels/matmul.hpp's StoredMatrix): a F32, BF16
// or F16 matrix split in runs (or not), at an address aligned to its element
// (the mapping is page-aligned, but a safetensors file's data starts right
// after its JSON header, of any length: a float32 matrix at an odd address
// is converted, a copy, as before); nothing otherwise (per-head splits are
// converted as before). The lesson's (K, N) is the stored matrix, or
// nn.Linear's (N, K) transposed; a part's columns are then the stored
// matrix's columns, or its rows.
std::optional<StoredWeight> stored_part(const std::shared_ptr<const Checkpoint>& ck, const Read& r, std::size_t part) {
    if (r.use->kind == TensorUse::Kind::input || r.shape.size() != 2) return std::nullopt;
    if (r.use->into.size() > 1 && r.use->split != TensorUse::Split::runs) return std::nullopt;
    const SafetensorsFile& file = ck->file_of(r.tensor);
    const StTensor& t = ck->expect(r.tensor, r.shape, r.role);
    if (t.dtype != StDtype::f32 && t.dtype != StDtype::bf16 && t.dtype != StDtype::f16) return std::nullopt;
    const std::size_t size = t.dtype == StDtype::f32 ? 4 : 2;  // bytes of an element
    const std::uint8_t* bytes = file.bytes(t);
    if (reinterpret_cast<std::uintptr_t>(bytes) % size) return std::nullopt;
    const bool linear = r.use->layout == TensorUse::Layout::linear;
    const std::size_t parts = r.use->into.size(), rows = r.shape[0], cols = r.shape[1];
    const std::size_t width = (linear ? rows : cols) / parts;  // the part's output columns
    StoredWeight w;
    w.matrix.type = t.dtype == StDtype::f32 ? StoredType::f32 : t.dtype == StDtype::bf16 ? StoredType::bf16 : StoredType::f16;
    w.matrix.transposed = linear;
    w.matrix.ld = cols;
    w.matrix.data = bytes + size * part * width * (linear ? cols : 1);
    w.bytes = size * rows * cols / parts;
    w.check = [ck, &t, &file] { file.check_finite(t); };
    w.release = [ck, &t, &file] { file.drop_pages(t, 0, numel(t.shape), true); };
    return w;
}

std::string title_of(const Family& fam, const ModelSizes& z, const std::string& dir) {
    const bool grouped = [&] {
        for (const SizeField& s : fam.sizes)
            if (s.size == Size::kv_heads) return true;
        return false;
    }();
    return grouped ? fmt::format("{} from {}: {} blocks, d_model {}, {} heads ({} K/V heads), vocabulary {}", fam.title, dir,
                                 z.layers, z.d_model, z.heads, z.kv_heads, z.vocab)
                   : fmt::format("{} from {}: {} blocks, d_model {}, {} heads, vocabulary {}", fam.title, dir, z.layers,
                                 z.d_model, z.heads, z.vocab);
}

void configure(const Family& fam, const ModelSizes& z, Lesson& l) {
    Config& cfg = l.config;
    cfg.d_model = z.d_model;
    cfg.heads = z.heads;
    for (const SizeField& s : fam.sizes)
        if (s.size == Size::kv_heads) cfg.kv_heads = z.kv_heads;
    if (z.head_dim * z.heads != z.d_model) cfg.d_k = z.head_dim;
    cfg.d_ff = z.d_ff;
    cfg.mask = fam.mask;
    cfg.activation = z.activation;
    cfg.norm = fam.norm;
    cfg.eps = z.eps;
    cfg.positions.kind = fam.positions;
    if (fam.positions == PositionKind::rope) {
        cfg.positions.layout = RopeLayout::half;  // rotate_half
        cfg.positions.base = z.rope_theta;
        cfg.positions.rotary_dims = z.rotary_dims;
    }
    cfg.arch.blocks = z.layers;
    cfg.arch.norm_first = fam.norm_first;
    cfg.arch.parallel = z.parallel;
    cfg.arch.shared_norm = z.parallel && fam.shared_norm;
    cfg.arch.embed_norm = fam.embed_norm;
    cfg.arch.final_norm = fam.lm_head;
    cfg.arch.unembed = fam.lm_head;  // lm_head, or the embedding when tied
    cfg.unembed_tied = fam.lm_head && z.tied;
    l.set_range(Stage::embed, fam.lm_head ? Stage::unembed : Stage::norm2);
}

}  // namespace

void build_family(HfModel& m, const Family& fam, const ModelSizes& z, const Checkpoint& ck,
                  const std::vector<std::int64_t>& ids) {
    if (z.sliding_window && ids.size() > z.sliding_window)
        fail_file(ck.where(),
                  fmt::format("at most {} tokens (config.json's {}: a longer text's mask is not computed)", z.sliding_window,
                              fam.window_key),
                  fmt::format("{} tokens", ids.size()));
    const std::string p = ck.has(fam.prefix_probe) ? fam.prefix : "";
    auto read = [&](const TensorUse& u, const std::string& name, const std::string& role) {
        Read r{u.name[0] == '/' ? std::string(u.name + 1) : name, {}, role, &u, z.heads};
        for (const Extent& e : u.shape) r.shape.push_back(e.times * z.of(e.size));
        return r;
    };
    std::vector<Read> model;
    for (const TensorUse& u : fam.model_tensors)
        if (present(u, z)) model.push_back(read(u, p + u.name, u.role));
    std::vector<std::vector<Read>> blocks(z.layers);
    for (std::size_t b = 0; b < z.layers; ++b) {
        const std::string path = p + with_block(fam.block_path, b);
        for (const TensorUse& u : fam.block_tensors)
            if (present(u, z)) blocks[b].push_back(read(u, path + u.name, fmt::format("block {}'s {}", b, u.role)));
    }
    // Every tensor present and of its shape, checked before any is converted;
    // then what the run holds at once within --max-memory: the model's own
    // tensors (held throughout), one block's float32 weights (converted when
    // its passes run, lesson/weight_source.hpp) and the block's largest
    // tensor read whole once more to be transposed or split. The plan adds the trace's
    // bytes to it before the run.
    // A matrix the products read in place (stored_part) counts in its stored
    // bytes, and is never read whole for a transpose or a split.
    auto shared = std::make_shared<const Checkpoint>(ck);
    std::size_t held = 0, block = 0, whole = 0, in_place = 0;
    auto check = [&](const Read& r) {
        ck.expect(r.tensor, r.shape, r.role);
        return numel(r.shape);  // the config's extents, each bounded above
    };
    auto stored_bytes = [&](const Read& r) -> std::size_t {  // of an element read in place, else 0
        const auto s = stored_part(shared, r, 0);
        return !s ? 0 : s->matrix.type == StoredType::f32 ? 4 : 2;
    };
    for (const Read& r : model) {
        const std::size_t values = check(r), in_place_size = stored_bytes(r);
        held += values * (in_place_size ? in_place_size : sizeof(float));
    }
    for (const auto& reads : blocks) {
        std::size_t n = 0;
        for (const Read& r : reads) {
            const std::size_t values = check(r);
            if (const std::size_t size = stored_bytes(r)) {
                n += values * size;
                ++in_place;
                continue;
            }
            n += values * sizeof(float);
            if (r.use->layout == TensorUse::Layout::linear || r.use->into.size() > 1)
                whole = std::max(whole, values * sizeof(float));
        }
        block = std::max(block, n);
    }
    require_weight_budget(ck.where(), held + block + whole,
                          std::string(": the model's own tensors, one block's weights") +
                              (in_place ? " (its matrices as stored, read in place)" : "") +
                              (whole ? " and one of them once more, read whole to be transposed or split" : ""));

    start_model_lesson(m, fam.model_type, title_of(fam, z, m.dir), ids);
    Lesson& l = m.lesson;
    configure(fam, z, l);
    auto source = std::make_shared<WeightSource>();
    auto later = [&](const std::string& name, const Read& r, std::size_t part) {
        auto load = [shared, r, part] { return take(*shared, r, part); };
        if (auto stored = stored_part(shared, r, part))
            source->add(name, numel(r.shape) / r.use->into.size(), std::move(load), std::move(*stored));
        else
            source->add(name, numel(r.shape) / r.use->into.size(), std::move(load));
    };
    for (const Read& r : model)
        for (std::size_t i = 0; i < r.use->into.size(); ++i) {
            const std::string name = r.use->into[i];
            if (r.use->kind == TensorUse::Kind::input) l.inputs[name] = take(ck, r, i);
            else if (r.use->kind == TensorUse::Kind::weight) l.weights[name] = take(ck, r, i);
            else later(name, r, i);  // the unembedding: converted when it runs, after the blocks
        }
    // The blocks' weights: converted when their block's passes run.
    for (std::size_t b = 0; b < z.layers; ++b) {
        const std::string w = z.layers > 1 ? fmt::format("blocks.{}.", b) : std::string();
        for (const Read& r : blocks[b])
            for (std::size_t i = 0; i < r.use->into.size(); ++i) later(w + r.use->into[i], r, i);
    }
    l.weight_source = std::move(source);
}

}  // namespace attntrace
