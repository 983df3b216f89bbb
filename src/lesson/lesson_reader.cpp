// Lesson file -> validated Lesson. Every check names the file and the field
// path; see docs/lesson-format.md for the format this reads.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/closest.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/npy.hpp"
#include "lesson/generate.hpp"
#include "core/json_field.hpp"
#include "lesson/lesson.hpp"
#include "lesson/batch_reader.hpp"
#include "lesson/claim_reader.hpp"
#include "lesson/config_reader.hpp"
#include "lesson/weights.hpp"

namespace attntrace {

namespace {

// Dimension bounds, checked before anything is sized by them. Generous for
// real models (BERT-base: C 768, F 3072; long contexts: T 32768+) and far
// below what would overflow the products the pipeline forms.
constexpr std::int64_t kMaxVocab = 1 << 24;
constexpr double kMaxStd = 1e37;  // 9 std (the largest normal draw) still fits a float

class LessonReader {
public:
    LessonReader(const json& doc, const std::string& file) : doc_(doc), f_(file) { lesson_.file = file; }

    // A lesson on a checkpoint (its "model" field): the model's lesson, built
    // by the model layer, with this file's header and claims.
    Lesson read_on(Lesson base) {
        f_.object(doc_, "");
        f_.only_keys(doc_, "", {"format", "version", "id", "title", "source", "description", "model", "claims"});
        lesson_ = std::move(base);
        lesson_.file = f_.file();
        lesson_.source = {};
        header();
        dims_ = lesson_.dims();
        claims();
        return std::move(lesson_);
    }

    Lesson read() {
        f_.object(doc_, "");
        if (f_.optional(doc_, "model"))
            f_.fail("model", "a lesson of its own here (a lesson on a checkpoint is read by run, check, export, report, "
                    "explain and decode)", "a checkpoint's lesson");
        if (auto* fmt_name = f_.optional(doc_, "format"); fmt_name && *fmt_name == "attntrace-cost-lesson")
            f_.fail("format", "\"attntrace-lesson\" (a cost lesson has no pipeline to run: `attntrace check` reads it)",
                    describe(*fmt_name));
        // A trace is what export writes from a lesson: run and check read lessons, diff and report read traces.
        if (auto* fmt_name = f_.optional(doc_, "format"); fmt_name && *fmt_name == "attntrace-trace")
            f_.fail("format", "\"attntrace-lesson\"",
                    "\"attntrace-trace\": this is a trace (what export writes), not a lesson; `attntrace diff` "
                    "reads traces");
        f_.only_keys(doc_, "", {"format", "version", "id", "title", "source", "description", "tokens",
                                "query_tokens", "token_ids", "memory_tokens", "config", "run", "inputs", "weights",
                                "weights_seed", "given", "document_rounding", "input_decimals", "claims", "batch",
                                "unplaced"});
        header();
        tokens();
        config();
        run_range();
        inputs();
        unembedding();
        weights();
        given();
        document_rounding();
        input_decimals();
        claims();
        check_entry();
        return std::move(lesson_);
    }

private:
    const json& doc_;
    Fields f_;
    Lesson lesson_;
    Dims dims_;
    std::size_t budget_ = max_memory_bytes();
    std::size_t reserved_ = 0;

    // Everything the run will allocate is counted against the memory budget
    // before it is allocated: the trace, generated inputs and weights.
    void reserve(std::size_t floats, const std::string& path, const std::string& what) {
        std::size_t bytes = floats > SIZE_MAX / sizeof(float) ? SIZE_MAX : floats * sizeof(float);
        if (bytes > budget_ || reserved_ > budget_ - bytes)
            f_.fail(path, fmt::format("a lesson that fits in {} (--max-memory, $ATTNTRACE_MAX_MEMORY)", human_bytes(budget_)),
                    fmt::format("{} needing {} more, on top of {}", what, human_bytes(bytes), human_bytes(reserved_)));
        reserved_ += bytes;
    }

    // {"npy": "relative/path.npy"}: a tensor from a .npy file, the path
    // relative to the lesson's folder (io/npy.hpp reads it). Its errors keep
    // one line: "LESSON: FIELD: NPY: byte N: expected ..., found ...".
    static bool is_npy_ref(const json& v) { return v.is_object() && v.contains("npy"); }
    std::string npy_file_;  // the last file read_npy_ref read, for shape messages
    Tensor read_npy_ref(const json& v, const std::string& path, bool allow_neg_inf) {
        namespace fs = std::filesystem;
        f_.only_keys(v, path, {"npy"});
        const std::string rel = f_.string(v["npy"], join(path, "npy"));
        if (rel.empty() || fs::path(rel).is_absolute())
            f_.fail(join(path, "npy"), "a path relative to the lesson's folder", describe(v["npy"]));
        npy_file_ = (fs::path(lesson_.file).parent_path() / rel).string();
        NpyRead options;
        options.allow_neg_inf = allow_neg_inf;
        bool budget = false;  // whether the refusal is reserve()'s, which names the lesson already
        options.before_alloc = [&](const Shape&, std::size_t n) {
            budget = true;
            reserve(n, path, npy_file_);
            budget = false;
        };
        try {
            return read_npy(npy_file_, options);
        } catch (const InputError& e) {
            if (budget) throw;
            throw e.within(f_.file(), path);  // the .npy file's error, inside this lesson's field
        }
    }
    // "a 3x4 array in W_Q.npy", for a shape that does not fit.
    std::string npy_found(const Shape& s) const { return array_text(s) + " in " + npy_file_; }

    void header() {
        auto fmt_name = f_.string(f_.member(doc_, "", "format"), "format");
        if (fmt_name != "attntrace-lesson") f_.fail("format", "\"attntrace-lesson\"", describe(doc_["format"]));
        auto version = f_.integer(f_.member(doc_, "", "version"), "version", 1, 1000000);
        if (version != kLessonFormatVersion)
            f_.fail("version", fmt::format("{} (the lesson format this attntrace reads)", kLessonFormatVersion),
                    fmt::format("{}", version));
        lesson_.id = f_.string(f_.member(doc_, "", "id"), "id");
        if (lesson_.id.empty() || !std::all_of(lesson_.id.begin(), lesson_.id.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
            }))
            f_.fail("id", "letters, digits, '-', '_' or '.'", describe(doc_["id"]));
        lesson_.title = f_.string(f_.member(doc_, "", "title"), "title");
        if (auto* d = f_.optional(doc_, "description")) lesson_.description = f_.string(*d, "description");
        // What `attntrace draft` could not place: for the author to read, nothing runs from it.
        if (auto* u = f_.optional(doc_, "unplaced")) {
            if (!u->is_array()) f_.fail("unplaced", "an array of the printed arrays a draft could not place", describe(*u));
            for (std::size_t i = 0; i < u->size(); ++i)
                if (!(*u)[i].is_object())
                    f_.fail("unplaced[" + std::to_string(i) + "]", "an object (where, quote, nearest, agree, max_error)",
                            describe((*u)[i]));
        }
        // A private lesson (one's own model, notes not yet published) may leave its source out.
        const json* given_src = f_.optional(doc_, "source");
        if (!given_src) return;
        const json& src = f_.object(*given_src, "source");
        f_.only_keys(src, "source", {"document", "title", "section"});
        lesson_.source.document = f_.string(f_.member(src, "source", "document"), "source.document");
        if (auto* t = f_.optional(src, "title")) lesson_.source.title = f_.string(*t, "source.title");
        if (auto* s = f_.optional(src, "section")) lesson_.source.section = f_.string(*s, "source.section");
    }

    void tokens() {
        if (auto* b = f_.optional(doc_, "batch")) return batch_tokens(*b);
        lesson_.tokens = f_.strings(f_.member(doc_, "", "tokens"), "tokens", true);
        if (static_cast<std::int64_t>(lesson_.tokens.size()) > kMaxTokens)
            f_.fail("tokens", fmt::format("at most {} tokens", kMaxTokens),
                    fmt::format("{}", lesson_.tokens.size()));
        if (auto* q = f_.optional(doc_, "query_tokens"))
            lesson_.query_tokens = f_.strings(*q, "query_tokens", true);
        if (auto* ids = f_.optional(doc_, "token_ids")) {
            if (!ids->is_array()) f_.fail("token_ids", "an array of integers", describe(*ids));
            if (ids->size() != lesson_.tokens.size())
                f_.fail("token_ids", fmt::format("one id per token ({})", lesson_.tokens.size()),
                        fmt::format("{}", ids->size()));
            for (std::size_t i = 0; i < ids->size(); ++i)
                lesson_.token_ids.push_back(f_.integer((*ids)[i], index("token_ids", i), 0, kMaxVocab - 1));
        }
    }

    // A batched lesson gives its tokens per sequence; the lesson's own `tokens`
    // become the position labels p0..p{T-1} (see src/batch/).
    void batch_tokens(const json& b) {
        for (const char* key : {"tokens", "token_ids", "query_tokens"})
            if (f_.optional(doc_, key))
                f_.fail(key, "no top-level tokens in a batched lesson (each of batch.sequences gives its own)",
                        fmt::format("\"{}\" beside \"batch\"", key));
        lesson_.batch = read_batch_tokens(f_, b, kMaxTokens, kMaxVocab);
        lesson_.tokens = batch_position_labels(batch_length(*lesson_.batch));
    }

    void config() {
        lesson_.config = read_config(f_, f_.member(doc_, "", "config"), lesson_.tokens, lesson_.query_labels().size());
        // Each sequence's padding mask follows from its length; only causal combines with it.
        const MaskKind mk = lesson_.config.mask;
        if (lesson_.batch && mk != MaskKind::none && mk != MaskKind::causal)
            f_.fail("config.mask", "\"none\" or \"causal\" in a batched lesson (each sequence's padding mask follows "
                    "from its length)", fmt::format("a {} mask", mask_name(mk)));
        if (lesson_.batch && !lesson_.config.arch.is_default())
            f_.fail("batch", "a batch only of one encoder block (no config.blocks, norm_first, embed_norm, final_norm, unembed or block \"decoder\")",
                    "a batch");
        dims_ = lesson_.dims();
        if (lesson_.config.arch.decoder) memory();
        else if (f_.optional(doc_, "memory_tokens"))
            f_.fail("memory_tokens", "memory tokens only with config.block \"decoder\"", "memory tokens");
    }

    // A decoder's memory: the encoder's output its cross-attention reads, (S, C).
    void memory() {
        auto* mt = f_.optional(doc_, "memory_tokens");
        if (!mt) f_.fail("memory_tokens", "the encoder's tokens (config.block is \"decoder\")", "nothing (the field is missing)");
        lesson_.memory_tokens = f_.strings(*mt, "memory_tokens", true);
        if (static_cast<std::int64_t>(lesson_.memory_tokens.size()) > kMaxTokens)
            f_.fail("memory_tokens", fmt::format("at most {} tokens", kMaxTokens), fmt::format("{}", lesson_.memory_tokens.size()));
    }

    // config.unembed ranges over the vocabulary of inputs.embedding (its rows are V).
    void unembedding() {
        if (lesson_.config.arch.unembed && !lesson_.inputs.count("embedding"))
            f_.fail("config.unembed", "a lesson with inputs.embedding and token_ids (the logits range over its rows, the vocabulary)",
                    lesson_.inputs.count("X") ? "inputs.X" : "no inputs.embedding");
    }

    void run_range() {
        if (auto* r = f_.optional(doc_, "run")) {
            f_.object(*r, "run");
            f_.only_keys(*r, "run", {"from", "to"});
            auto stage = [&](const char* key, Stage def) {
                auto* v = f_.optional(*r, key);
                if (!v) return def;
                auto name = f_.string(*v, join("run", key));
                auto s = stage_from_name(name);
                if (!s) f_.fail(join("run", key), "a stage (" + stage_list() + ")", describe(*v));
                return *s;
            };
            lesson_.from = stage("from", Stage::embed);
            lesson_.to = stage("to", Stage::norm2);
            // Without RoPE the rope stage records nothing: a run cannot start or end there.
            for (const char* key : {"from", "to"})
                if (lesson_.config.positions.kind != PositionKind::rope && f_.optional(*r, key) &&
                    (key[0] == 'f' ? lesson_.from : lesson_.to) == Stage::rope)
                    f_.fail(join("run", key), "\"rope\" only with config.positions {\"kind\": \"rope\", ...}",
                            fmt::format("\"rope\" with positions {}", position_name(lesson_.config.positions.kind)));
            if (lesson_.batch && lesson_.from != Stage::embed)
                f_.fail("run.from", "\"embed\" in a batched lesson (its inputs are each sequence's X or token ids)",
                        describe((*r)["from"]));
            if (lesson_.to < lesson_.from)
                f_.fail("run.to", fmt::format("a stage at or after run.from ({})", stage_name(lesson_.from)),
                        std::string(stage_name(lesson_.to)));
            // Other models repeat and reorder the stages: a stage name no longer names one place.
            if (!lesson_.config.arch.is_default())
                f_.fail("run", "no run range with config.blocks, norm_first, embed_norm, final_norm, unembed or block \"decoder\" (they run whole)",
                        "a run range");
        }
        lesson_.set_range(lesson_.from, lesson_.to);
        // attn_out of another width than X's cannot be added to X: such a run ends at "out"
        if (const Config& c = lesson_.config; c.dout() != c.d_model && (lesson_.to > Stage::out || !c.arch.is_default()))
            f_.fail("config.d_out",
                    fmt::format("d_model ({}) when the run goes past \"out\" (the residual adds attn_out to X), or run.to \"out\"",
                                c.d_model),
                    fmt::format("{} with the run to {}", c.d_out, c.arch.is_default() ? stage_name(lesson_.to) : "the whole block"));
        if (!lesson_.config.arch.is_default() && !lesson_.query_tokens.empty())
            f_.fail("query_tokens", "no query_tokens with config.blocks, norm_first, embed_norm, final_norm, unembed or block \"decoder\"",
                    fmt::format("{} query tokens", lesson_.query_tokens.size()));
        // The trace's memory depends on the trace policy: the run's plan checks
        // it before the run (pipeline/plan.hpp). Here: the lesson's own tensors.
        if (!lesson_.query_tokens.empty()) {
            // ALiBi places query r at position T - Tq + r: there must be a position for each query.
            if (lesson_.config.positions.kind == PositionKind::alibi && lesson_.query_tokens.size() > lesson_.tokens.size())
                f_.fail("query_tokens",
                        fmt::format("at most {} query tokens with ALiBi (the queries are the last positions of the {} "
                                    "tokens)", lesson_.tokens.size(), lesson_.tokens.size()),
                        fmt::format("{}", lesson_.query_tokens.size()));
            if (lesson_.from < Stage::scores)
                f_.fail("query_tokens", "no query_tokens when the run computes Q from X (run.from before \"scores\")",
                        fmt::format("{} query tokens", lesson_.query_tokens.size()));
            // Every mask but none and custom places query i at position i + T - Tq.
            const MaskKind mk = lesson_.config.mask;
            if (mk != MaskKind::none && mk != MaskKind::custom && lesson_.query_tokens.size() > lesson_.tokens.size())
                f_.fail("query_tokens",
                        fmt::format("at most {} query tokens with a {} mask (the queries are the last positions "
                                    "of the {} tokens)", lesson_.tokens.size(), mask_name(mk), lesson_.tokens.size()),
                        fmt::format("{}", lesson_.query_tokens.size()));
            if (lesson_.to > Stage::out && lesson_.query_tokens.size() != lesson_.tokens.size())
                f_.fail("query_tokens", "as many query tokens as tokens when the run goes past \"out\"",
                        fmt::format("{} query tokens for {} tokens", lesson_.query_tokens.size(), lesson_.tokens.size()));
        }
    }

    void inputs() {
        auto* in = f_.optional(doc_, "inputs");
        if (!in) {
            if (lesson_.batch) batch_inputs(false);
            return;
        }
        f_.object(*in, "inputs");
        f_.only_keys(*in, "inputs", {"X", "embedding", "positions", "memory", "token_types"});
        if (lesson_.batch && f_.optional(*in, "X"))
            f_.fail("inputs.X", "no inputs.X in a batched lesson (each of batch.sequences gives its X)", "an X");
        if (auto* m = f_.optional(*in, "memory")) {
            if (!lesson_.config.arch.decoder)
                f_.fail("inputs.memory", "a memory only with config.block \"decoder\"", "a memory");
            lesson_.inputs["memory"] = read_matrix(*m, "inputs.memory", {lesson_.memory_tokens.size(), dims_.C},
                                                   "memory_tokens x d_model", 1.0);
        }
        if (auto* x = f_.optional(*in, "X"))
            lesson_.inputs["X"] = read_matrix(*x, "inputs.X", {dims_.T, dims_.C},
                                              "tokens x d_model", 1.0);
        if (auto* e = f_.optional(*in, "embedding")) {
            std::vector<std::int64_t> ids = lesson_.token_ids;
            if (lesson_.batch) {
                for (const auto& s : lesson_.batch->sequences) ids.insert(ids.end(), s.token_ids.begin(), s.token_ids.end());
                ids.push_back(lesson_.batch->pad_id);
            }
            if (ids.empty() || (lesson_.batch && lesson_.batch->pad_id < 0))
                f_.fail(lesson_.batch ? "batch.pad_id" : "token_ids",
                        lesson_.batch ? "the pad token's id in inputs.embedding" : "token ids to look up in inputs.embedding",
                        "nothing (the field is missing)");
            std::int64_t vocab = *std::max_element(ids.begin(), ids.end()) + 1;
            Tensor table = read_matrix(*e, "inputs.embedding", {0, dims_.C}, "vocab x d_model", 1.0,
                                       static_cast<std::size_t>(vocab));
            if (table.shape[0] < static_cast<std::size_t>(vocab))
                f_.fail("inputs.embedding", fmt::format("at least {} rows (the largest token id + 1)", vocab),
                        fmt::format("{} rows", table.shape[0]));
            lesson_.inputs["embedding"] = std::move(table);
        }
        if (lesson_.batch) {
            batch_inputs(lesson_.inputs.count("embedding") > 0);
        }
        if (lesson_.inputs.count("X") && lesson_.inputs.count("embedding"))
            f_.fail("inputs", "either X or embedding", "both");
        dims_ = lesson_.dims();  // the vocabulary: the embedding's rows
        if (auto* p = f_.optional(*in, "positions")) {
            // Learned positions: a table of P >= T rows, row p added at position p.
            if (lesson_.config.positions.kind != PositionKind::learned)
                f_.fail("inputs.positions", "a table only with config.positions \"learned\"",
                        fmt::format("a table with positions {}", position_name(lesson_.config.positions.kind)));
            Tensor table = read_matrix(*p, "inputs.positions", {0, dims_.C}, "positions x d_model", 1.0, dims_.T);
            if (table.shape[0] < dims_.T)
                f_.fail("inputs.positions", fmt::format("at least {} rows (one per token position)", dims_.T),
                        fmt::format("{} rows", table.shape[0]));
            lesson_.inputs["positions"] = std::move(table);
        }
        if (auto* tt = f_.optional(*in, "token_types")) {
            // BERT's token type (segment) table: R >= 1 rows; row 0 is added to every token (one sentence).
            if (lesson_.batch) f_.fail("inputs.token_types", "no token type table in a batched lesson", "a table");
            lesson_.inputs["token_types"] =
                read_matrix(*tt, "inputs.token_types", {0, dims_.C}, "token types x d_model", 1.0, 2);
        }
    }

    void batch_inputs(bool embedding) {
        // X rows per sequence: bounded by the file's size; counted for the run's padded copies.
        reserve(lesson_.batch->sequences.size() * dims_.T * dims_.C, "batch", "the padded sequences' X");
        read_batch_inputs(f_, doc_["batch"], *lesson_.batch, dims_.C, embedding,
                          [this](const json& x, const std::string& path, const Shape& shape, const std::string& what) {
                              return read_matrix(x, path, shape, what, 1.0);  // X's default std, as inputs.X
                          });
    }

    // A matrix given inline or as a generator {"generate": ..., "seed": ..., "std": ...}.
    // A 0 in `shape` accepts any extent there (the embedding table's rows);
    // generated tables get `rows_if_generated` rows.
    Tensor read_matrix(const json& v, const std::string& path, Shape shape, const std::string& what,
                       double default_std, std::size_t rows_if_generated = 0) {
        if (v.is_object() && !is_npy_ref(v) && v.contains("generate") && v["generate"] == "torch_uniform")
            return read_torch_uniform(v, path, std::move(shape), what, rows_if_generated);
        if (v.is_object() && !is_npy_ref(v)) {
            f_.only_keys(v, path, {"generate", "seed", "std"});
            auto kind = f_.string(f_.member(v, path, "generate"), join(path, "generate"));
            Fill fill;
            if (kind == "normal") fill = Fill::normal;
            else if (kind == "zeros") fill = Fill::zeros;
            else if (kind == "ones") fill = Fill::ones;
            else if (kind == "identity") fill = Fill::identity;
            else f_.fail(join(path, "generate"), "\"normal\", \"zeros\", \"ones\", \"identity\" or \"torch_uniform\"", describe(v["generate"]));
            std::uint64_t seed = 0;
            if (auto* s = f_.optional(v, "seed"))
                seed = static_cast<std::uint64_t>(f_.integer(*s, join(path, "seed"), 0, INT64_MAX));
            else if (fill == Fill::normal)
                f_.fail(join(path, "seed"), "a seed for the normal generator", "nothing (the field is missing)");
            double sd = default_std;
            if (auto* s = f_.optional(v, "std")) {
                sd = f_.number(*s, join(path, "std"));
                // Box-Muller draws stay within 9 std: keep every sample a finite float.
                if (sd < 0 || sd > kMaxStd)
                    f_.fail(join(path, "std"), fmt::format("a number from 0 to {:g}", kMaxStd), describe(*s));
            }
            for (auto& d : shape)
                if (d == 0) d = rows_if_generated;
            if (fill == Fill::identity && (shape.size() != 2 || shape[0] != shape[1]))
                f_.fail(join(path, "generate"), "\"identity\" only for a square matrix",
                        fmt::format("a {} {}", shape_str(shape), what));
            std::size_t n = 0;
            if (!checked_numel(shape, kMaxElements, n))
                f_.fail(path, fmt::format("at most {} numbers", kMaxElements), shape_str(shape));
            reserve(n, path, "a generated " + shape_str(shape) + " " + what);
            return generate(fill, shape, seed, sd);
        }
        const bool npy = is_npy_ref(v);
        Tensor t = npy ? read_npy_ref(v, path, false) : f_.tensor(v, path, false);
        bool ok = t.shape.size() == shape.size();
        for (std::size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] == 0 || shape[i] == t.shape[i];
        if (!ok) {
            Shape want = shape;
            std::string w = shape_str(want);
            if (std::find(shape.begin(), shape.end(), 0) != shape.end())
                w = fmt::format("N x {}", shape.back());
            f_.fail(path, fmt::format("a {} array ({})", w, what), npy ? npy_found(t.shape) : found_shape(v, t.shape));
        }
        return t;
    }

    // {"generate": "torch_uniform", "seed": S, "offset": K, "low": L, "high": H}: PyTorch's uniform_ after
    // torch.manual_seed(S), from draw K on (generate.hpp).
    Tensor read_torch_uniform(const json& v, const std::string& path, Shape shape, const std::string& what,
                              std::size_t rows_if_generated) {
        f_.only_keys(v, path, {"generate", "seed", "offset", "low", "high"});
        const auto seed = static_cast<std::uint64_t>(f_.integer(f_.member(v, path, "seed"), join(path, "seed"), 0, INT64_MAX));
        std::uint64_t offset = 0;
        if (auto* o = f_.optional(v, "offset"))
            offset = static_cast<std::uint64_t>(f_.integer(*o, join(path, "offset"), 0, static_cast<std::int64_t>(kMaxTorchOffset)));
        double low = 0, high = 1;
        if (auto* l = f_.optional(v, "low")) low = f_.number(*l, join(path, "low"));
        if (auto* h = f_.optional(v, "high")) high = f_.number(*h, join(path, "high"));
        if (!(std::fabs(low) <= kMaxStd && std::fabs(high) <= kMaxStd))
            f_.fail(join(path, std::fabs(low) > kMaxStd ? "low" : "high"), fmt::format("a number from {:g} to {:g}", -kMaxStd, kMaxStd),
                    describe(std::fabs(low) > kMaxStd ? v["low"] : v["high"]));
        if (low > high) f_.fail(join(path, "high"), fmt::format("a number at least low ({:g})", low), describe(v["high"]));
        for (auto& d : shape)
            if (d == 0) d = rows_if_generated;
        std::size_t n = 0;
        if (!checked_numel(shape, kMaxElements, n)) f_.fail(path, fmt::format("at most {} numbers", kMaxElements), shape_str(shape));
        reserve(n, path, "a generated " + shape_str(shape) + " " + what);
        return torch_uniform(shape, seed, offset, low, high);
    }

    void weights() {
        std::optional<std::uint64_t> seed;
        if (auto* s = f_.optional(doc_, "weights_seed"))
            seed = static_cast<std::uint64_t>(f_.integer(*s, "weights_seed", 0, INT64_MAX));
        const json* w = f_.optional(doc_, "weights");
        if (w) f_.object(*w, "weights");
        const std::vector<WeightUse> uses = weight_uses(lesson_.config);
        if (w) {
            std::vector<std::string> names;
            for (const WeightUse& u : uses) names.push_back(u.name);
            for (auto it = w->begin(); it != w->end(); ++it)
                if (std::find(names.begin(), names.end(), it.key()) == names.end())
                    f_.fail(join("weights", it.key()),
                            lesson_.config.arch.blocks > 1 ? "a weight name blocks.i.NAME, i < config.blocks, NAME one of " + weight_list()
                                                           : "a weight name (" + weight_list() + ")",
                            "an unknown field" + closest_note(closest_names(it.key(), names)), ErrorKind::unknown_field);
        }
        // Every weight weights_seed will generate, checked as a whole before any
        // is: a model over the budget (64 blocks under --max-memory 2G) is
        // refused at once, not after generating the part that fits (14 s, 1.8 GiB).
        auto generated = [&](const WeightUse& use) {
            const WeightSpec& spec = *use.spec;
            return seed && !(w && f_.optional(*w, use.name.c_str())) && weight_applies(spec, lesson_.config) &&
                   lesson_.runs(spec.stage) && !(spec.uses_d_ff() && dims_.F == 0);
        };
        std::size_t to_generate = 0, count = 0;
        for (const WeightUse& use : uses) {
            if (!generated(use)) continue;
            const Shape shape = use.spec->shape(dims_);
            std::size_t n = 0;
            if (!checked_numel(shape, kMaxElements, n))
                f_.fail("weights_seed", fmt::format("weights of at most {} numbers to generate", kMaxElements),
                        fmt::format("{} {}", join("weights", use.name), shape_str(shape)));
            to_generate = n > SIZE_MAX - to_generate ? SIZE_MAX : to_generate + n;
            ++count;
        }
        if (count)
            reserve(to_generate, "weights_seed",
                    fmt::format("{} generated weight{} of {} floats in all", count, count == 1 ? "" : "s", to_generate));
        for (const WeightUse& use : uses) {
            const WeightSpec& spec = *use.spec;
            Shape shape = spec.shape(dims_);
            std::string path = join("weights", use.name);
            const json* v = w ? f_.optional(*w, use.name.c_str()) : nullptr;
            if (!weight_applies(spec, lesson_.config)) {
                if (v) f_.fail(path, "a weight this config uses", fmt::format("{} ({})", use.name, weight_use(spec, lesson_.config)));
                continue;
            }
            if (v) {
                if (spec.uses_d_ff() && dims_.F == 0)
                    f_.fail("config.d_ff", fmt::format("d_ff, since {} is given", path), "nothing (the field is missing)");
                // Read as the lesson wrote it (paths and shapes in its layout), kept as d_in x d_out.
                const WeightLayout layout = lesson_.config.weight_layout;
                Tensor m = read_matrix(*v, path, spec.shape(dims_, layout), spec.shape_text(dims_, layout), spec.default_std(dims_));
                lesson_.weights[use.name] = spec.swapped(layout) ? transposed(m) : std::move(m);
            } else if (generated(use)) {  // reserved above, with the others
                lesson_.weights[use.name] = generate(spec.init, shape, derive_seed(*seed, use.name.c_str()), spec.default_std(dims_));
            }
        }
    }

    // A given part of a step, {"at": {...}, "values": [...]}: the selected cells' values in the
    // selection's shape (the heads side by side allowed, as for a whole step); the other cells keep
    // the formula's. Only a step the run computes (at or after run.from) has a formula to keep.
    Given given_part(const StepDef& def, const json& v, const std::string& path, const Shape& want) {
        f_.only_keys(v, path, {"at", "values"});
        if (def.pass < lesson_.first_pass)
            f_.fail(path, fmt::format("the whole step: a step before run.from (\"{}\") is an input, with no formula "
                                      "to keep the cells it does not give",
                                      stage_name(lesson_.from)),
                    "a part (\"at\")");
        std::vector<Axis> free_axes = def.axes;
        std::vector<std::pair<Axis, std::size_t>> fixed;
        std::vector<std::pair<Axis, std::vector<std::size_t>>> narrowed;
        read_at(f_, lesson_, dims_, def, f_.member(v, path, "at"), join(path, "at"), free_axes, fixed, narrowed);
        std::vector<std::string> axes;
        for (Axis a : def.axes) axes.emplace_back(axis_name(a));
        Shape region;
        const std::vector<std::size_t> offsets = selected_offsets(fixed, narrowed, want, axes, &region);
        const std::string vp = join(path, "values");
        Tensor part = f_.tensor(f_.member(v, path, "values"), vp, def.neg_inf != NegInf::never);
        std::string left;
        for (Axis a : free_axes) left += (left.empty() ? "" : ", ") + std::string(axis_name(a));
        if (!shape_accepts(part.shape, region, ends_with_heads(free_axes)))
            f_.fail(vp, fmt::format("{} (the axes \"at\" leaves of {}: {})", array_text(region), def.name, left),
                    found_shape(v["values"], part.shape));
        Given g{Tensor(want), Tensor(want), {}};
        for (std::size_t k = 0; k < offsets.size(); ++k) {
            g.values.data[offsets[k]] = part.data[k];
            g.cells.data[offsets[k]] = 1.0f;
        }
        return g;
    }

    void given() {
        auto* g = f_.optional(doc_, "given");
        if (!g) return;
        f_.object(*g, "given");
        if (lesson_.batch && !g->empty())
            f_.fail("given", "no given values in a batched lesson (they would be one sequence's)", "given values");
        for (auto it = g->begin(); it != g->end(); ++it) {
            std::string path = join("given", it.key());
            const StepDef* def = lesson_.catalogue().find(it.key());
            if (!def) f_.fail(path, "a step name (see docs/steps.md)", "an unknown step", ErrorKind::unknown_step);
            // The kernels read K/V head h / (NH/KVH) from the config: a given map could only contradict them.
            if (def->leaf == Leaf::kv_head)
                f_.fail(path, "a step the lesson may give (the K/V head of each query head follows from config.kv_heads)",
                        def->name);
            if (def->pass > lesson_.last_pass)
                f_.fail(path, fmt::format("a step of a stage up to run.to ({})", stage_name(lesson_.to)),
                        fmt::format("a step of stage {}", stage_name(def->stage)));
            if ((def->pass >= lesson_.first_pass || !position_step_applies(lesson_.config.positions.kind, def->leaf)) &&
                !lesson_.records(*def))
                f_.fail(path, "a step this lesson records", fmt::format("{} ({})", def->name, why_not_recorded(*def)));
            require_d_ff(*def, path);
            Shape want = step_shape(*def, lesson_.dims_of(lesson_.catalogue().pass_of(*def)));
            if (it->is_object() && !is_npy_ref(*it)) {
                lesson_.given[def->name] = given_part(*def, *it, path, want);
                continue;
            }
            const bool neg_inf = def->neg_inf != NegInf::never, npy = is_npy_ref(*it);
            Tensor t = npy ? read_npy_ref(*it, path, neg_inf) : f_.tensor(*it, path, neg_inf);
            if (!shape_accepts(t.shape, want, ends_with_heads(def->axes)))
                f_.fail(path, fmt::format("{} (the step's shape {})", array_text(want),
                                          axes_text(*def)),
                        npy ? npy_found(t.shape) : found_shape(*it, t.shape));
            t.shape = want;
            lesson_.given[def->name] = Given{std::move(t), {}, {}};
        }
    }

    // "input_decimals": {"inputs.X": 4, "weights.W_Q": 4, "given.blocks.0.attn.hook_q": 2}: each an input, a
    // weight or a whole given step the lesson holds.
    void input_decimals() {
        auto* d = f_.optional(doc_, "input_decimals");
        if (!d) return;
        f_.object(*d, "input_decimals");
        for (auto it = d->begin(); it != d->end(); ++it) {
            const std::string path = join("input_decimals", it.key()), key = it.key();
            const bool input = key.rfind("inputs.", 0) == 0, weight = key.rfind("weights.", 0) == 0,
                       given = key.rfind("given.", 0) == 0;
            const std::string name = input ? key.substr(7) : weight ? key.substr(8) : given ? key.substr(6) : "";
            const auto g = given ? lesson_.given.find(name) : lesson_.given.end();
            if ((input && !lesson_.inputs.count(name)) || (weight && !lesson_.weights.count(name)) ||
                (given && (g == lesson_.given.end() || !g->second.whole())) || name.empty())
                f_.fail(path, "\"inputs.NAME\", \"weights.NAME\" or \"given.STEP\" of an input, a weight or a whole given step the lesson gives",
                        fmt::format("\"{}\"", key));
            lesson_.input_decimals[key] = static_cast<int>(f_.integer(*it, path, 0, kMaxDecimals));
        }
    }

    void document_rounding() {
        auto* d = f_.optional(doc_, "document_rounding");
        if (!d) return;
        f_.object(*d, "document_rounding");
        for (auto it = d->begin(); it != d->end(); ++it) {
            std::string path = join("document_rounding", it.key());
            const StepDef* def = lesson_.catalogue().find(it.key());
            if (!def) f_.fail(path, "a step name (see docs/steps.md)", "an unknown step", ErrorKind::unknown_step);
            if (!lesson_.records(*def))
                f_.fail(path, "a step this lesson records", fmt::format("{} ({})", def->name, why_not_recorded(*def)));
            lesson_.document_rounding[it.key()] = static_cast<int>(f_.integer(*it, path, 0, kMaxDecimals));
        }
    }

    void claims() {
        auto* c = f_.optional(doc_, "claims");
        if (!c) return;
        if (!c->is_array()) f_.fail("claims", "an array of claims", describe(*c));
        std::set<std::string> ids;
        for (std::size_t i = 0; i < c->size(); ++i) {
            Claim claim = read_claim(
                {f_, lesson_, dims_, [this](const StepDef& d) { return why_not_recorded(d); }}, (*c)[i], index("claims", i));
            if (!ids.insert(claim.id).second)
                f_.fail(index("claims", i) + ".id", "an id used by no other claim", "\"" + claim.id + "\" again");
            lesson_.claims.push_back(std::move(claim));
        }
    }

    // The run's first stage needs something to start from.
    void check_entry() {
        switch (lesson_.from) {
            case Stage::embed:
                if (lesson_.batch) break;  // batch_inputs() required each sequence's X or ids
                if (lesson_.config.arch.decoder && !lesson_.inputs.count("memory"))
                    f_.fail("inputs.memory", "the encoder's output, memory_tokens x d_model (config.block is \"decoder\")",
                            "nothing (the field is missing)");
                if (!lesson_.inputs.count("X") && !lesson_.inputs.count("embedding") &&
                    !lesson_.given.count(lesson_.catalogue().step(Leaf::resid_pre, 0).name))
                    f_.fail("inputs", "X, or embedding with token_ids (run.from is \"embed\")", "neither");
                if (lesson_.inputs.count("embedding") && lesson_.token_ids.empty())
                    f_.fail("token_ids", "token ids for inputs.embedding", "nothing");
                if (lesson_.config.positions.kind == PositionKind::learned && !lesson_.inputs.count("positions") &&
                    !lesson_.given.count(lesson_.catalogue().step(Leaf::pos_embed, -1).name))
                    f_.fail("inputs.positions", "a positions x d_model table (config.positions is \"learned\")",
                            "nothing (the field is missing)");
                break;
            default: {
                // At least one step the first stage consumes must be given, or
                // one of its own steps, from which the rest of it runs (GELU of
                // a given mlp.hook_pre, the weights of given scores).
                bool any = false;
                const Reads reads = lesson_.reads();
                const Catalogue& cat = lesson_.catalogue();
                const Pass& first = cat.passes()[static_cast<std::size_t>(lesson_.first_pass)];
                for (const StepDef* def : cat.consumed_by(first, reads)) any = any || lesson_.given.count(def->name);
                for (std::size_t i = first.first; i < first.end; ++i)
                    any = any || (lesson_.given.count(cat.steps()[i].name) && lesson_.records(cat.steps()[i]));
                if (!any) {
                    std::string list;
                    for (const StepDef* def : cat.consumed_by(first, reads)) list += (list.empty() ? "" : " or ") + def->name;
                    f_.fail("given", fmt::format("{}, or a step of the {} stage itself (run.from is \"{}\")", list,
                                                 stage_name(lesson_.from), stage_name(lesson_.from)),
                            "none of them");
                }
            }
        }
    }

    std::string why_not_recorded(const StepDef& def) const {
        if (def.leaf == Leaf::embed && lesson_.runs(Stage::embed))
            return "recorded only when the lesson looks tokens up in inputs.embedding or adds positions to X";
        if (!position_step_applies(lesson_.config.positions.kind, def.leaf))
            return fmt::format("recorded only with config.positions {}, and this lesson's is {}",
                               position_step_kind(def.leaf), position_name(lesson_.config.positions.kind));
        if (!config_records(lesson_.config, def.leaf))
            return fmt::format("recorded only with {}", config_records_when(def.leaf));
        return fmt::format("stage {} is outside run {}..{} and the step is not given", stage_name(def.stage),
                           stage_name(lesson_.from), stage_name(lesson_.to));
    }

    // A step with a d_ff axis has no shape until the lesson gives d_ff.
    void require_d_ff(const StepDef& def, const std::string& what) const {
        if (dims_.F == 0 && std::find(def.axes.begin(), def.axes.end(), Axis::d_ff) != def.axes.end())
            f_.fail("config.d_ff", fmt::format("d_ff, since {} names {}", what, def.name), "nothing (the field is missing)");
    }

    // "a 4x3 array", or the value itself when it is not an array ("2", "string \"abc\"").
    static std::string found_shape(const json& v, const Shape& s) {
        return v.is_array() ? array_text(s) : describe(v);
    }

};

}  // namespace

Dims Lesson::dims() const {
    Dims d;
    d.T = tokens.size();
    d.Tq = query_labels().size();
    d.P = d.T;
    d.C = config.d_model;
    d.NH = config.heads;
    d.hs = config.dk();
    d.hv = config.dv();
    d.O = config.dout();
    d.KVH = config.kv_heads ? config.kv_heads : config.heads;
    d.F = config.d_ff;
    d.B = batch ? batch->sequences.size() : 1;
    if (auto e = inputs.find("embedding"); e != inputs.end()) d.V = e->second.shape.at(0);
    return d;
}

Dims Lesson::dims_of(const Pass& p) const {
    Dims d = dims();
    if (p.cross) {
        d.Tq = d.T;
        d.T = memory_tokens.size();
    }
    return d;
}

void Lesson::set_range(Stage f, Stage t) {
    from = f;
    to = t;
    const Catalogue& cat = catalogue();
    first_pass = config.arch.is_default() ? cat.first_pass(f) : 0;
    last_pass = config.arch.is_default() ? cat.last_pass(t) : static_cast<int>(cat.passes().size()) - 1;
}

bool Lesson::runs(Stage s) const {
    const auto& passes = catalogue().passes();
    for (int p = first_pass; p <= last_pass && p < static_cast<int>(passes.size()); ++p)
        if (passes[static_cast<std::size_t>(p)].stage == s) return true;
    return false;
}

Reads Lesson::reads() const {
    return {config.positions.kind == PositionKind::rope, config.mask_at, config.scale.recorded};
}

bool Lesson::records(const StepDef& def) const {
    if (def.leaf == Leaf::embed && !inputs.count("embedding") && !config.positions.additive() &&
        !inputs.count("token_types"))
        return false;
    if (def.leaf == Leaf::token_type_embed && !inputs.count("token_types")) return false;
    if (!position_step_applies(config.positions.kind, def.leaf)) return false;
    if (!config_records(config, def.leaf)) return false;
    if (runs_pass(def.pass)) return true;
    return def.pass < first_pass && given.count(def.name) > 0;
}

std::vector<std::string> Lesson::recorded_step_names() const {
    std::vector<std::string> out;
    for (const StepDef& def : catalogue().steps())
        if (records(def)) out.push_back(def.name);
    return out;
}

const Tensor* Lesson::weight(const std::string& name) const {
    auto it = weights.find(name);
    if (it != weights.end()) return &it->second;
    return weight_source ? weight_source->get(name) : nullptr;
}

// The token lists, held to kMaxTokens while they are parsed: ten million
// tokens are refused at the first one too many, not after building them all
// (1.2 GiB). tokens() checks the same bound, and each list, once read. The
// claims and the members naming steps or weights likewise: a 40 MB file of
// millions of them is refused at the first one past its bound (~0.1 s), not
// after building them all (~1.5 s of CPU and 1.3 GiB for `{}`s).
constexpr JsonLimits kLessonLimits = {{"tokens", kMaxTokens},
                                      {"query_tokens", kMaxTokens},
                                      {"memory_tokens", kMaxTokens},
                                      {"token_ids", kMaxTokens},
                                      {"claims", kMaxClaims},
                                      {"given", kMaxNamedMembers},
                                      {"document_rounding", kMaxNamedMembers},
                                      {"input_decimals", kMaxNamedMembers},
                                      {"weights", kMaxNamedMembers},
                                      {"inputs", kMaxNamedMembers}};

Lesson parse_lesson(const std::string& text, const std::string& file) {
    json doc = parse_json_text(text, file, kLessonLimits);
    return LessonReader(doc, file).read();
}

LessonDocument load_lesson_document(const std::string& path) {
    return {std::make_shared<const json>(load_json_file(path, kLessonLimits)), path};
}

std::optional<ModelRef> lesson_model_ref(const LessonDocument& d) {
    const Fields f(d.file);
    f.object(*d.doc, "");
    const json* m = f.optional(*d.doc, "model");
    if (!m) return std::nullopt;
    f.object(*m, "model");
    f.only_keys(*m, "model", {"dir", "text", "ids"});
    ModelRef ref;
    // The folder, relative to the lesson file's (as a lesson's .npy files are)
    const std::string dir = f.string(f.member(*m, "model", "dir"), "model.dir");
    ref.dir = (std::filesystem::path(d.file).parent_path() / dir).lexically_normal().string();
    const json* text = f.optional(*m, "text");
    const json* ids = f.optional(*m, "ids");
    if (!text == !ids) f.fail("model", "a text or ids (one of them)", text ? "both" : "neither");
    if (text) ref.text = f.string(*text, "model.text");
    if (ids) {
        if (!ids->is_array() || ids->empty()) f.fail("model.ids", "an array of token ids", describe(*ids));
        if (ids->size() > static_cast<std::size_t>(kMaxTokens))
            f.fail("model.ids", fmt::format("at most {} ids", kMaxTokens), fmt::format("{}", ids->size()));
        for (std::size_t i = 0; i < ids->size(); ++i)
            ref.ids.push_back(f.integer((*ids)[i], fmt::format("model.ids[{}]", i), 0, kMaxVocab - 1));
    }
    return ref;
}

Lesson read_lesson(const LessonDocument& d) { return LessonReader(*d.doc, d.file).read(); }

Lesson read_lesson_on_model(const LessonDocument& d, Lesson model) {
    return LessonReader(*d.doc, d.file).read_on(std::move(model));
}

Lesson read_lesson(const std::string& path) {
    json doc = load_json_file(path, kLessonLimits);
    return LessonReader(doc, path).read();
}

JsonLimits lesson_json_limits() { return kLessonLimits; }

// Lesson ids as a typo is held to them: by any run of their dash-separated
// parts ("ring-fell" to 003-3.1-ring-fell), since the parts that name the
// example come after the article's number and section.
constexpr NameParts kLessonIdParts{'-', true, ""};

std::string resolve_lesson(const std::string& name_or_path) {
    namespace fs = std::filesystem;
    if (fs::exists(name_or_path) || name_or_path.find('/') != std::string::npos ||
        (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json"))
        return name_or_path;
    const fs::path direct = fs::path(lessons_dir()) / (name_or_path + ".json");
    // Cost lessons (docs/cost.md) live in lessons/cost/.
    const fs::path cost = fs::path(lessons_dir()) / "cost" / (name_or_path + ".json");
    if (fs::exists(direct)) return direct.string();
    if (fs::exists(cost)) return cost.string();
    // An id that is none: the nearest ids, as a mistyped step name gets its nearest names.
    std::vector<std::string> ids;
    std::error_code ec;
    for (const fs::path& dir : {fs::path(lessons_dir()), fs::path(lessons_dir()) / "cost"})
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".json") ids.push_back(e.path().stem().string());
    std::sort(ids.begin(), ids.end());
    fail_file(name_or_path, "a lesson id (`attntrace list` lists them) or a lesson file",
              "no lesson of that id in " + lessons_dir() + closest_note(closest_names(name_or_path, ids, 3, kLessonIdParts)));
}

std::vector<std::string> list_lesson_files() {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(lessons_dir(), ec))
        if (e.path().extension() == ".json") out.push_back(e.path().string());
    if (ec) fail_file(lessons_dir(), "expected a folder of lessons, found none (set ATTNTRACE_LESSONS)");
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace attntrace
