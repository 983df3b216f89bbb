// lesson.batch -> Batch, every mistake named by its path.
#include "lesson/batch_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace attntrace {

namespace {

const char* const kPath = "batch";

}  // namespace

Batch read_batch_tokens(const Fields& f, const json& v, std::int64_t max_tokens, std::int64_t max_vocab) {
    f.object(v, kPath);
    f.only_keys(v, kPath, {"pad_token", "pad_id", "pad_x", "sequences"});
    Batch b;
    b.pad_token = f.string(f.member(v, kPath, "pad_token"), "batch.pad_token");
    if (b.pad_token.empty()) f.fail("batch.pad_token", "a non-empty token string (the label of pad positions)", "\"\"");
    if (auto* id = f.optional(v, "pad_id")) b.pad_id = f.integer(*id, "batch.pad_id", 0, max_vocab - 1);
    const json& seqs = f.member(v, kPath, "sequences");
    if (!seqs.is_array()) f.fail("batch.sequences", "an array of sequences ({\"tokens\": [...], ...})", describe(seqs));
    if (seqs.empty()) f.fail("batch.sequences", "at least one sequence", "an empty array");
    if (static_cast<std::int64_t>(seqs.size()) > kMaxBatch)
        f.fail("batch.sequences", fmt::format("at most {} sequences", kMaxBatch), fmt::format("{}", seqs.size()));
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        const std::string p = index("batch.sequences", i);
        const json& s = f.object(seqs[i], p);
        f.only_keys(s, p, {"tokens", "token_ids", "X"});
        BatchSequence seq;
        seq.tokens = f.strings(f.member(s, p, "tokens"), join(p, "tokens"), true);
        if (static_cast<std::int64_t>(seq.tokens.size()) > max_tokens)
            f.fail(join(p, "tokens"), fmt::format("at most {} tokens", max_tokens), fmt::format("{}", seq.tokens.size()));
        // A real token spelled like the pad token could not be told from padding in the trace.
        for (std::size_t t = 0; t < seq.tokens.size(); ++t)
            if (seq.tokens[t] == b.pad_token)
                f.fail(index(join(p, "tokens"), t),
                       fmt::format("a real token (padding to the longest sequence is added, as \"{}\")", b.pad_token),
                       describe(seqs[i]["tokens"][t]) + ", the pad token");
        if (auto* ids = f.optional(s, "token_ids")) {
            const std::string ip = join(p, "token_ids");
            if (!ids->is_array()) f.fail(ip, "an array of integers", describe(*ids));
            if (ids->size() != seq.tokens.size())
                f.fail(ip, fmt::format("one id per token ({})", seq.tokens.size()), fmt::format("{}", ids->size()));
            for (std::size_t t = 0; t < ids->size(); ++t)
                seq.token_ids.push_back(f.integer((*ids)[t], index(ip, t), 0, max_vocab - 1));
        }
        b.sequences.push_back(std::move(seq));
    }
    return b;
}

void read_batch_inputs(const Fields& f, const json& v, Batch& b, std::size_t C, bool embedding,
                       const ReadMatrix& matrix) {
    const json& seqs = v["sequences"];
    if (embedding) {
        if (b.pad_id < 0)
            f.fail("batch.pad_id", "the pad token's id in inputs.embedding (the lesson looks tokens up there)",
                   "nothing (the field is missing)");
        if (f.optional(v, "pad_x"))
            f.fail("batch.pad_x", "no pad_x with inputs.embedding (a pad position is row pad_id of the table)",
                   "a pad_x");
    } else if (f.optional(v, "pad_id")) {
        f.fail("batch.pad_id", "no pad_id without inputs.embedding (give pad_x, or nothing for zeros)", "a pad_id");
    }
    b.pad_x = Tensor(Shape{C});  // zeros: nn.Embedding(padding_idx=...)'s pad row
    if (auto* px = f.optional(v, "pad_x")) {
        Tensor t = f.tensor(*px, "batch.pad_x", false);
        if (t.shape != Shape{C})
            f.fail("batch.pad_x", fmt::format("an array of {} numbers (d_model)", C), array_text(t.shape));
        b.pad_x = std::move(t);
    }
    for (std::size_t i = 0; i < b.sequences.size(); ++i) {
        const std::string p = index("batch.sequences", i);
        BatchSequence& seq = b.sequences[i];
        const json* x = f.optional(seqs[i], "X");
        if (embedding) {
            if (x) f.fail(join(p, "X"), "token_ids, not X, with inputs.embedding", "an X");
            if (seq.token_ids.empty())
                f.fail(join(p, "token_ids"), "token ids to look up in inputs.embedding", "nothing (the field is missing)");
            continue;
        }
        if (!seq.token_ids.empty())
            f.fail(join(p, "token_ids"), "no token_ids without inputs.embedding (give X)", "token_ids");
        if (!x) f.fail(join(p, "X"), fmt::format("the sequence's X ({} x {}: tokens x d_model)", seq.tokens.size(), C),
                       "nothing (the field is missing)");
        seq.X = matrix(*x, join(p, "X"), Shape{seq.tokens.size(), C}, "tokens x d_model");
    }
}

std::vector<std::string> batch_position_labels(std::size_t T) {
    std::vector<std::string> out;
    for (std::size_t p = 0; p < T; ++p) out.push_back(fmt::format("p{}", p));
    return out;
}

std::vector<std::string> batch_labels(std::size_t B) {
    std::vector<std::string> out;
    for (std::size_t b = 0; b < B; ++b) out.push_back(fmt::format("b{}", b));
    return out;
}

std::size_t batch_length(const Batch& b) {
    std::size_t T = 0;
    for (const auto& s : b.sequences) T = std::max(T, s.tokens.size());
    return T;
}

}  // namespace attntrace
