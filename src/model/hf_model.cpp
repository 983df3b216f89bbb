// A checkpoint folder -> a lesson: config.json read with field paths, the
// model type's mapping, the input tokenized, and the end of the model.
#include "model/hf_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/memory.hpp"
#include "core/printable.hpp"
#include "io/safetensors.hpp"
#include "model/family.hpp"
#include "model/family_load.hpp"

namespace attntrace {

std::string known_model_types() {
    std::string out;
    for (const Family& f : families()) out += (out.empty() ? "\"" : ", \"") + std::string(f.model_type) + "\"";
    return out;
}

std::string HfModel::label(std::int64_t id) const {
    // A piece's control characters (byte-level BPE has a piece for each of the 32 C0 controls) escaped as
    // core/printable.hpp escapes them, "\x08": a label drawn raw would be an empty box, or act on a terminal.
    if (tokenizer) {
        const std::string p = tokenizer->shown(id);
        if (!p.empty()) return printable(p);
    }
    if (wordpiece) {
        const std::string& p = wordpiece->piece(id);  // as the vocabulary spells it: "##ing", "[CLS]"
        if (!p.empty()) return printable(p);
    }
    return fmt::format("#{}", id);
}

namespace {

// Every id within the vocabulary, and no more tokens than the model's positions.
void check_ids(const std::vector<std::int64_t>& ids, const ModelInput& input, std::size_t vocab, std::size_t positions,
               const char* positions_field) {
    const std::string source = input.text ? input.text_source : input.ids_source;
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= static_cast<std::int64_t>(vocab))
            fail_field(source, fmt::format("[{}]", i),
                       fmt::format("a token id below the vocabulary's {} (config.json's vocab_size)", vocab),
                       fmt::format("{}", ids[i]));
    if (ids.size() > positions)
        fail_file(source, fmt::format("at most {} tokens (config.json's {})", positions, positions_field),
                  fmt::format("{} tokens", ids.size()));
}

}  // namespace

HfModel load_hf_model(const std::string& dir, const ModelInput& input) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        fail_file(dir, "a checkpoint folder (config.json, model.safetensors, the tokenizer's files)",
                  fs::exists(dir, ec) ? "a file" : "nothing there");
    const std::string config_path = (fs::path(dir) / "config.json").string();
    if (!fs::exists(config_path, ec)) fail_file(config_path, "the model's config.json", "no such file");
    const json config = load_json_file(config_path);
    Fields f(config_path);
    f.object(config, "");
    const std::string type = f.string(f.member(config, "", "model_type"), "model_type");
    const Family* fam = find_family(type);
    if (!fam) f.fail("model_type", "a model type this attntrace maps (" + known_model_types() + ")", describe(config["model_type"]));
    HfModel m;
    m.dir = dir;
    m.model_type = type;
    if (fam->tokenizer == TokenizerKind::wordpiece) m.wordpiece = WordPiece::open(dir);
    else m.tokenizer = Tokenizer::open(dir);

    // The input's ids, before the weights: a wrong input costs no loading.
    std::vector<std::int64_t> ids = input.ids;
    std::vector<TokenSpan> spans;  // with a text: each token's bytes in it
    if (input.text) {
        if (!m.tokenizer && !m.wordpiece)
            fail_file(dir, fmt::format("a tokenizer ({}) to read {}", fam->tokenizer_files, input.text_source),
                      "none in the folder (give --ids instead)");
        Encoding e = m.wordpiece ? m.wordpiece->tokenize(*input.text, input.text_source)
                                 : m.tokenizer->tokenize(*input.text, input.text_source);
        ids = std::move(e.ids);
        spans = std::move(e.spans);
        if (ids.empty()) fail_file(input.text_source, "a text of at least one token", "an empty text");
    }
    if (ids.empty()) fail_file(input.ids_source, "at least one token id", "none");
    const ModelSizes sizes = read_family_config(*fam, config, config_path);
    const char* positions_field = "";
    for (const SizeField& s : fam->sizes)
        if (s.size == Size::positions) positions_field = s.key;
    check_ids(ids, input, sizes.vocab, sizes.positions, positions_field);
    m.max_positions = sizes.positions;
    m.positions_field = positions_field;
    build_family(m, *fam, sizes, Checkpoint::open(dir), ids);
    if (input.text) {
        m.lesson.text = *input.text;
        m.lesson.token_spans = std::move(spans);
    }
    if (!m.lm_head()) return m;
    // The logits' vocab axis labelled by the pieces (␣ for a leading space), "#id" past the tokenizer's.
    const std::size_t V = m.lesson.inputs.at("embedding").shape.at(0);
    m.lesson.vocab.reserve(V);
    for (std::size_t v = 0; v < V; ++v) m.lesson.vocab.push_back(m.label(static_cast<std::int64_t>(v)));
    return m;
}

void require_weight_budget(const std::string& where, std::size_t bytes, const std::string& what) {
    const std::size_t budget = max_memory_bytes();
    if (bytes > budget)
        fail_file(where, fmt::format("weights that fit in {} (--max-memory) as the run holds them{}", human_bytes(budget), what),
                  fmt::format("{} of them", human_bytes(bytes)));
}

double read_norm_eps(const Fields& f, const json& config, const char* key, double fallback) {
    const json* e = f.optional(config, key);
    if (!e) return fallback;
    const double eps = f.number(*e, key);
    if (!(eps >= kMinEps && eps <= kMaxEps))
        f.fail(key, fmt::format("a number from {:g} to {:g} (the norm's eps, added in float32)", kMinEps, kMaxEps),
               describe(*e));
    return eps;
}

void start_model_lesson(HfModel& m, const std::string& id_prefix, std::string title,
                        const std::vector<std::int64_t>& ids) {
    Lesson& l = m.lesson;
    l.file = m.dir;
    l.id = id_prefix + "-" + std::filesystem::path(m.dir).lexically_normal().filename().string();
    std::replace_if(l.id.begin(), l.id.end(), [](char ch) {
        return !std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.';
    }, '_');
    l.title = std::move(title);
    l.source.document = m.dir;
    l.token_ids = ids;
    for (auto id : ids) l.tokens.push_back(m.label(id));
}

}  // namespace attntrace
