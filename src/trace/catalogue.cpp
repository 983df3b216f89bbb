#include "trace/catalogue.hpp"
#include "trace/stream_symbol.hpp"

#include <cctype>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace attntrace {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string block_prefix(int b) { return fmt::format("blocks.{}.", b); }

}  // namespace

std::string stream_symbol(const std::string& name, int b) {
    if (name == "embed.ln.hook_normalized") return "LN_emb";  // block 0's input under config.embed_norm
    if (name == "ln_final.hook_normalized") return "LN_f";
    const std::string prefix = block_prefix(b);
    if (!starts_with(name, prefix)) return "X";
    const std::string tail = name.substr(prefix.size());
    if (tail == "hook_resid_pre") return "X";
    if (tail == "hook_resid_mid") return "X_mid";
    if (tail == "hook_resid_mid2") return "X_mid2";
    if (tail == "hook_resid_post") return "X_post";
    if (tail == "hook_attn_out") return "attn_out";
    if (tail == "hook_cross_attn_out") return "cross_out";
    if (tail == "hook_mlp_out") return "FFN";
    if (starts_with(tail, "ln") && tail.size() > 2) return "LN" + tail.substr(2, 1);
    return tail;
}

namespace {

// The template a pass copies: the norm and add passes of generated models
// all follow norm1's and add1's wording, renumbered.
Stage template_stage(Stage s, bool is_default) {
    if (is_default) return s;
    if (s == Stage::norm2) return Stage::norm1;
    return s;
}

}  // namespace

bool Arch::operator<(const Arch& o) const {
    return std::tie(blocks, norm_first, decoder, parallel, shared_norm, embed_norm, final_norm, unembed) <
           std::tie(o.blocks, o.norm_first, o.decoder, o.parallel, o.shared_norm, o.embed_norm, o.final_norm, o.unembed);
}

Catalogue::Catalogue(const Arch& arch) : arch_(arch) {
    Pass embed;
    embed.stage = Stage::embed;
    add_pass(embed, {});
    std::string in = "blocks.0.hook_resid_pre";
    if (arch.embed_norm) {
        // embed.ln = LN(E + PE + TT)   (T, C): BERT's embeddings.LayerNorm, before block 0
        Pass norm;
        norm.stage = Stage::norm1;
        norm.norm_index = 0;
        Wiring w;
        w.x = in;
        w.out = "embed.ln.";
        add_pass(norm, w);
        in = w.out + "hook_normalized";
    }
    for (std::size_t b = 0; b < arch.blocks; ++b) {
        add_block(static_cast<int>(b), in);
        const Pass& last = passes_.back();
        in = last.stage == Stage::norm2 ? wiring_.back().out + "hook_normalized" : wiring_.back().out;
    }
    if (arch.final_norm) {
        // ln_final = LN_f(the last block's output)   (T, C)
        Pass norm;
        norm.stage = Stage::norm1;
        norm.norm_index = kFinalNorm;
        Wiring w;
        w.x = in;
        w.out = "ln_final.";
        add_pass(norm, w);
        in = w.out + "hook_normalized";
    }
    if (arch.unembed) {
        // unembed = LN_f·W_U   (T, C)·(C, V) -> (T, V)
        Pass unembed;
        unembed.stage = Stage::unembed;
        Wiring w;
        w.x = in;
        w.out = "unembed";
        add_pass(unembed, w);
    }
    for (std::size_t i = 0; i < steps_.size(); ++i) index_.emplace(steps_[i].name, i);
    // Every wire by its step, now that every step exists.
    for (std::size_t i = 0; i < passes_.size(); ++i) {
        Pass& p = passes_[i];
        const Wiring& w = wiring_[i];
        p.x = id_named(w.x);
        p.residual = id_named(w.residual);
        p.update = id_named(w.update);
        const bool norm = p.stage == Stage::norm1 || p.stage == Stage::norm2;
        p.out = id_named(norm ? w.out + "hook_normalized" : w.out);
    }
    wiring_.clear();
    wiring_.shrink_to_fit();
}

StepId Catalogue::id_named(const std::string& name) const {
    if (name.empty()) return {};
    auto it = index_.find(name);
    if (it == index_.end()) throw std::logic_error("attntrace: a pass is wired to no step " + name);
    return StepId{static_cast<std::uint32_t>(it->second)};
}

void Catalogue::add_block(int b, const std::string& in) {
    const std::string P = block_prefix(b);
    const std::string W = arch_.blocks > 1 ? P : "";
    auto attention = [&](bool cross, const std::string& x) {
        for (Stage s : {Stage::qkv, Stage::rope, Stage::scores, Stage::scale, Stage::mask, Stage::softmax, Stage::mix,
                        Stage::out}) {
            if (cross && s == Stage::rope) continue;  // positions rotate the self-attention's Q and K only
            Pass p;
            p.stage = s;
            p.block = b;
            p.cross = cross;
            p.weights = W + (cross ? "cross." : "");
            Wiring w;
            w.x = x;
            w.attn = P + (cross ? "cross_attn." : "attn.");
            w.attn_out = P + (cross ? "hook_cross_attn_out" : "hook_attn_out");
            add_pass(p, w);
        }
        return P + (cross ? "hook_cross_attn_out" : "hook_attn_out");
    };
    auto norm = [&](Stage s, const std::string& x, int k) {
        Pass p;
        p.stage = s;
        p.block = b;
        p.weights = W;
        p.norm_index = k;
        Wiring w;
        w.x = x;
        w.out = fmt::format("{}ln{}.", P, k);
        add_pass(p, w);
        return w.out + "hook_normalized";
    };
    auto add = [&](Stage s, const std::string& residual, const std::string& update, const std::string& out) {
        Pass p;
        p.stage = s;
        p.block = b;
        Wiring w;
        w.residual = residual;
        w.update = update;
        w.out = out;
        add_pass(p, w);
        return out;
    };
    auto ffn = [&](const std::string& x) {
        Pass p;
        p.stage = Stage::ffn;
        p.block = b;
        p.weights = W;
        Wiring w;
        w.x = x;
        w.mlp = P + "mlp.";
        w.mlp_out = P + "hook_mlp_out";
        add_pass(p, w);
        return P + "hook_mlp_out";
    };
    const std::string mid = P + "hook_resid_mid", mid2 = P + "hook_resid_mid2", post = P + "hook_resid_post";
    if (!arch_.decoder && !arch_.norm_first) {
        const std::string n1 = norm(Stage::norm1, add(Stage::add1, in, attention(false, in), mid), 1);
        norm(Stage::norm2, add(Stage::add2, n1, ffn(n1), post), 2);
    } else if (!arch_.decoder) {
        const std::string n1 = norm(Stage::norm1, in, 1);
        const std::string r1 = add(Stage::add1, in, attention(false, n1), mid);
        // parallel residual: LN2 reads the block's input, beside the attention rather than after it;
        // with a shared norm there is no LN2, the FFN reads LN1's output as the attention did
        add(Stage::add2, r1, ffn(arch_.shared_norm ? n1 : norm(Stage::norm2, arch_.parallel ? in : r1, 2)), post);
    } else if (!arch_.norm_first) {
        const std::string n1 = norm(Stage::norm1, add(Stage::add1, in, attention(false, in), mid), 1);
        const std::string n2 = norm(Stage::norm1, add(Stage::add1, n1, attention(true, n1), mid2), 2);
        norm(Stage::norm2, add(Stage::add2, n2, ffn(n2), post), 3);
    } else {
        const std::string r1 = add(Stage::add1, in, attention(false, norm(Stage::norm1, in, 1)), mid);
        const std::string r2 = add(Stage::add1, r1, attention(true, norm(Stage::norm1, r1, 2)), mid2);
        add(Stage::add2, r2, ffn(norm(Stage::norm2, r2, 3)), post);
    }
}

void Catalogue::add_pass(Pass p, Wiring w) {
    const bool plain = arch_.is_default();
    const int index = static_cast<int>(passes_.size());
    p.first = steps_.size();
    const Stage from = template_stage(p.stage, plain);
    // Post-norm: the block's last norm is its output.
    const bool block_output = !arch_.norm_first && p.stage == Stage::norm2;
    for (const StepTemplate& t : step_templates()) {
        if (t.stage != from) continue;
        const std::string_view tn = t.name;
        if (p.cross && (t.leaf == Leaf::alibi_slopes || t.leaf == Leaf::alibi)) continue;
        StepDef d{t.name, t.name, t.leaf, p.stage, index, p.block, p.cross, t.title, t.formula, t.explain, t.axes, t.neg_inf};
        if (!plain && p.stage != Stage::embed) {
            const int b = p.block;
            if (p.stage == Stage::add1 || p.stage == Stage::add2) {
                d.name = w.out;
                d.formula = fmt::format("{} = {} + {}", stream_symbol(w.out, b), stream_symbol(w.residual, b), stream_symbol(w.update, b));
                d.title = w.update == block_prefix(b) + "hook_mlp_out" ? "Residual add (FFN)"
                          : w.update == block_prefix(b) + "hook_cross_attn_out" ? "Residual add (cross-attention)"
                                                                                 : "Residual add (self-attention)";
            } else if (p.stage == Stage::norm1 || p.stage == Stage::norm2) {
                d.name = w.out + std::string(tn.substr(std::string_view("blocks.0.ln1.").size()));
                const bool final = p.norm_index == kFinalNorm;
                // The final norm reads the last block's output (X_post, or its last norm's LN2/LN3).
                replace_all(d.formula, "X_mid", stream_symbol(w.x, final ? static_cast<int>(arch_.blocks) - 1 : b));
                const auto which = [&](const char* kind) {
                    if (final) return fmt::format("Final {}", kind);
                    return p.norm_index ? fmt::format("{} {}", kind, p.norm_index) : fmt::format("Embedding {}", kind);
                };
                replace_all(d.title, "LayerNorm 1", which("LayerNorm"));
                replace_all(d.title, "RMSNorm 1", which("RMSNorm"));
                if (block_output && t.leaf == Leaf::ln_normalized) d.title = "Block output";
                if (arch_.shared_norm && p.norm_index == 1 && t.leaf == Leaf::ln_normalized)
                    d.explain += " The block's one norm (config.shared_norm): the attention and the FFN both read it.";
            } else if (p.stage == Stage::unembed) {
                d.formula = fmt::format("logits = {}·W_U", stream_symbol(w.x, static_cast<int>(arch_.blocks) - 1));
            } else if (p.stage == Stage::ffn) {
                replace_all(d.name, "blocks.0.mlp.", w.mlp);
                replace_all(d.name, "blocks.0.hook_mlp_out", w.mlp_out);
                replace_all(d.formula, "LN1", stream_symbol(w.x, b));
            } else {  // qkv .. out
                replace_all(d.name, "blocks.0.attn.", w.attn);
                replace_all(d.name, "blocks.0.hook_attn_out", w.attn_out);
                const bool kv = t.leaf == Leaf::k || t.leaf == Leaf::v;
                replace_all(d.formula, "X·", (p.cross && kv ? std::string("M") : stream_symbol(w.x, b)) + "·");
                if (p.cross) {
                    d.title = "Cross-attention: " + d.title;
                    if (kv) d.explain += " In cross-attention they come from the encoder's output M (inputs.memory).";
                    if (t.leaf == Leaf::q)
                        d.explain += " In cross-attention the queries come from the decoder's stream.";
                }
            }
            if (arch_.blocks > 1 && b >= 0) d.title += fmt::format(" (block {})", b);
        }
        steps_.push_back(std::move(d));
    }
    p.end = steps_.size();
    passes_.push_back(std::move(p));
    wiring_.push_back(std::move(w));
}

const StepDef* Catalogue::find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &steps_[it->second];
}

int Catalogue::first_pass(Stage s) const {
    for (std::size_t i = 0; i < passes_.size(); ++i)
        if (passes_[i].stage == s) return static_cast<int>(i);
    return -1;
}

int Catalogue::last_pass(Stage s) const {
    for (std::size_t i = passes_.size(); i-- > 0;)
        if (passes_[i].stage == s) return static_cast<int>(i);
    return -1;
}

std::vector<const StepDef*> Catalogue::consumed_by(const Pass& p, const Reads& reads) const {
    const bool rot = reads.rope && !p.cross;
    auto in = [&](Leaf leaf) { return &step(p, leaf); };
    auto wire = [&](StepId id) { return &at(id); };
    switch (p.stage) {
        case Stage::embed: return {};
        case Stage::qkv: return {wire(p.x)};  // cross: K and V read inputs.memory, not a step
        case Stage::rope: return {in(Leaf::q), in(Leaf::k)};
        case Stage::scores: return {in(scores_query(rot)), in(scores_key(rot))};
        case Stage::scale: return {in(Leaf::scores_raw)};
        case Stage::mask:
            if (reads.mask_at != MaskAt::raw) return {in(Leaf::scores_scaled)};
            if (reads.scale_factor) return {in(Leaf::scores_raw), in(Leaf::scale_factor)};
            return {in(Leaf::scores_raw)};
        case Stage::softmax:
            if (reads.mask_at == MaskAt::weights) return {in(Leaf::attn_scores), in(Leaf::mask)};
            return {in(Leaf::attn_scores)};
        case Stage::mix: return {in(Leaf::pattern), in(Leaf::v)};
        case Stage::out: return {in(Leaf::z)};
        case Stage::add1:
        case Stage::add2: return {wire(p.residual), wire(p.update)};
        case Stage::norm1:
        case Stage::norm2:
        case Stage::ffn:
        case Stage::unembed: return {wire(p.x)};
    }
    return {};
}

const StepDef& Catalogue::step(const Pass& p, Leaf leaf) const {
    // The pass's own steps first (a norm's ln_* are its own, whichever norm it is) ...
    for (std::size_t i = p.first; i < p.end; ++i)
        if (steps_[i].leaf == leaf) return steps_[i];
    // ... then its sub-block's (the Q the scores of block 1's cross-attention read), then the model's.
    const StepDef* outside = nullptr;
    for (const StepDef& s : steps_) {
        if (s.leaf != leaf) continue;
        if (s.block == p.block && s.cross == p.cross) return s;
        if (s.block < 0 && !outside) outside = &s;
    }
    if (outside) return *outside;
    throw std::logic_error(fmt::format("attntrace: pass {} of block {} has no step {}", stage_name(p.stage), p.block,
                                       static_cast<int>(leaf)));
}

const StepDef& Catalogue::step(Leaf leaf, int block, bool cross) const {
    // The block's own first (block 0's ln1, not the embeddings' norm before it), then the embeddings'.
    for (const StepDef& s : steps_)
        if (s.leaf == leaf && s.block == block && s.cross == cross) return s;
    for (const StepDef& s : steps_)
        if (s.leaf == leaf && s.block < 0 && s.cross == cross) return s;
    throw std::logic_error(fmt::format("attntrace: block {} has no step {}", block, static_cast<int>(leaf)));
}

std::string norm_weight_stem(const Pass& p) {
    if (p.norm_index == kFinalNorm) return "ln_final";
    return p.norm_index == 0 ? std::string("embed_ln") : fmt::format("ln{}", p.norm_index);
}

const Catalogue& catalogue_for(const Arch& arch) {
    static std::mutex mu;
    static std::map<Arch, std::unique_ptr<Catalogue>> made;
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = made[arch];
    if (!slot) slot = std::make_unique<Catalogue>(arch);
    return *slot;
}

CatalogueName read_catalogue_name(std::string_view name) {
    CatalogueName out{std::nullopt, std::string(name)};
    constexpr std::string_view kBlocks = "blocks.";  // block_prefix's
    if (!starts_with(name, kBlocks)) return out;
    std::size_t i = kBlocks.size(), n = 0;
    const std::size_t digits = i;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i - digits < 9; ++i) n = n * 10 + std::size_t(name[i] - '0');
    if (i == digits || i >= name.size() || name[i] != '.') return out;
    out.block = n;
    // renamed to block 0's, the step of a one-block catalogue of any layout (post- or pre-norm, encoder or
    // decoder) that has that name: its template (a decoder's cross-attention is its attention's, ln2's
    // pieces ln1's); a name no catalogue writes keeps block 0's name
    const std::string zero = block_prefix(0) + std::string(name.substr(i + 1));
    out.base = zero;
    for (bool decoder : {false, true})
        for (bool norm_first : {false, true}) {
            Arch arch;
            arch.decoder = decoder;
            arch.norm_first = norm_first;
            if (const StepDef* d = catalogue_for(arch).find(zero)) {
                out.base = d->base;
                return out;
            }
        }
    return out;
}

const Catalogue& default_catalogue() { return catalogue_for(Arch{}); }

const std::vector<StepDef>& step_catalogue() { return default_catalogue().steps(); }

const StepDef* find_step(std::string_view name) { return default_catalogue().find(name); }

}  // namespace attntrace
