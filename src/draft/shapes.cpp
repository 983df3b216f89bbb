#include "draft/shapes.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "draft/chain.hpp"
#include "draft/start.hpp"
#include "evaluate/evaluate.hpp"
#include "trace/trace.hpp"

namespace attntrace {

namespace {

// What a size is in a shape: the names articles give each (B, batch_size; T, n, seq_len; D, d_model, C;
// H, num_heads; D_h, d_k, head_dim).
enum class Role { unknown, batch, seq, d_model, heads, d_head };

const char* role_name(Role r) {
    switch (r) {
        case Role::batch: return "batch";
        case Role::seq: return "positions";
        case Role::d_model: return "d_model";
        case Role::heads: return "heads";
        case Role::d_head: return "d_head";
        default: return "?";
    }
}

// Sizes a shape lesson runs at: at most a model's width and a page's tokens (a bigger run proves no more).
constexpr long kMaxWidth = 2048, kMaxTokens = 512, kMaxHeads = 64;
// Sizes chosen when the article states none: small, and distinct from one another.
constexpr long kDefaultTokens = 5, kDefaultHeads = 2, kDefaultHeadWidth = 4;

std::string normal(const std::string& s) {
    std::string n;
    for (char c : s)
        if (c != '_' && c != '{' && c != '}' && c != '\\' && c != '$' && c != ' ') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n.rfind("self.", 0) == 0) n = n.substr(5);
    return n;
}

bool among(const std::string& n, std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return n == w; });
}

Role role_of(const std::string& dim) {
    if (!dim.empty() && std::isdigit(static_cast<unsigned char>(dim[0]))) return Role::unknown;
    if (dim.find('/') != std::string::npos) return Role::d_head;  // D/H, d_model // num_heads
    if (dim.find('*') != std::string::npos) return Role::d_model;  // H * D_h
    const std::string n = normal(dim);
    if (among(n, {"b", "batch", "batchsize", "bs", "bsz", "nbatch", "nbatches"})) return Role::batch;
    if (among(n, {"n", "t", "l", "seq", "seqlen", "seqlength", "sequencelength", "len", "length", "ntokens", "numtokens", "tokens",
                  "ctx", "nctx", "contextlength", "blocksize", "tq", "nq", "lq"}))
        return Role::seq;
    if (among(n, {"d", "dmodel", "embeddim", "dembed", "demb", "hidden", "hiddensize", "hiddendim", "dim", "e", "c", "modeldim",
                  "nembd", "embedsize", "embeddingdim", "dm", "embdim"}))
        return Role::d_model;
    if (among(n, {"h", "heads", "numheads", "nheads", "nhead", "nh", "numattentionheads"})) return Role::heads;
    if (among(n, {"dk", "dv", "dq", "dh", "headdim", "headsize", "dhead", "hs", "hd", "dkey", "dvalue"})) return Role::d_head;
    return Role::unknown;
}

bool is_number(const std::string& d) { return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }); }

// The orders articles write a step's axes in, each as roles.
std::vector<std::vector<Role>> orders_of(const std::string& step) {
    using R = Role;
    std::vector<std::vector<Role>> base;
    const std::string leaf = step.substr(step.rfind('.') + 1);
    if (leaf == "hook_q" || leaf == "hook_k" || leaf == "hook_v" || leaf == "hook_z")
        base = {{R::seq, R::d_head}, {R::heads, R::seq, R::d_head}, {R::seq, R::heads, R::d_head}, {R::seq, R::d_model}};
    else if (leaf == "hook_scores_raw" || leaf == "hook_scores_scaled" || leaf == "hook_pattern")
        base = {{R::seq, R::seq}, {R::heads, R::seq, R::seq}};
    else
        base = {{R::seq, R::d_model}};
    std::vector<std::vector<Role>> out;
    for (const auto& o : base) {  // a batch first, then without
        std::vector<Role> b = {R::batch};
        b.insert(b.end(), o.begin(), o.end());
        out.push_back(std::move(b));
    }
    out.insert(out.end(), base.begin(), base.end());
    return out;
}

}  // namespace

std::string shape_step(const std::string& name, const std::string& note) {
    const std::string n = normal(name);
    std::string w;
    for (char c : note) w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool projected = w.find("proj") != std::string::npos || w.find("w_o") != std::string::npos || w.find("wo") != std::string::npos;
    const std::string a = "blocks.0.attn.";
    if (among(n, {"x", "input", "inputs", "embeddings", "embedding", "embeds", "emb", "embedded", "hiddenstates", "xemb", "tokenembeddings"}))
        return "blocks.0.hook_resid_pre";
    if (among(n, {"q", "query", "queries", "xq", "qproj"})) return a + "hook_q";
    if (among(n, {"k", "key", "keys", "xk", "kproj"})) return a + "hook_k";
    if (among(n, {"v", "value", "values", "xv", "vproj"})) return a + "hook_v";
    if (among(n, {"scaledscores", "scaled", "tildes"})) return a + "hook_scores_scaled";
    if (among(n, {"scores", "score", "attnscores", "attentionscores", "s", "qk", "qkt", "energy", "dots", "sim", "logits"}))
        return a + "hook_scores_raw";
    if (among(n, {"weights", "attnweights", "attentionweights", "attention", "attn", "a", "p", "probs", "attnprobs", "pattn", "alpha",
                  "pattern", "att"}))
        return w.find("softmax") == std::string::npos && (w.find("@ k") != std::string::npos || w.find("qk") != std::string::npos)
                   ? a + "hook_scores_raw"
                   : a + "hook_pattern";
    if (among(n, {"final", "projected", "outproj", "finaloutput", "attnout", "mha", "multihead", "multiheadoutput"}))
        return "blocks.0.hook_attn_out";
    if (among(n, {"output", "out", "z", "o", "context", "ctx", "attnoutput", "attentionoutput", "headoutput", "headsoutput", "y", "result"}))
        return projected ? "blocks.0.hook_attn_out" : a + "hook_z";
    // an unknown name: what the words after it say it is
    if (w.find("softmax") != std::string::npos) return a + "hook_pattern";
    if (projected) return "blocks.0.hook_attn_out";
    if (w.find("@ v") != std::string::npos || w.find("weighted sum") != std::string::npos) return a + "hook_z";
    if (w.find("@ k") != std::string::npos || w.find("dot product") != std::string::npos) return a + "hook_scores_raw";
    return "";
}

namespace {

struct Sizes {
    std::map<std::string, long> named;     // by normal(name): what the article assigns
    std::map<Role, long> role;             // each role's size
    std::map<Role, std::string> from;      // where each came from, for the description
};

// A stated shape with its step and the order chosen for it.
struct Stated {
    const PrintedShape* shape;
    std::string step;
    std::vector<Role> order;
};

// How well `order` explains `dims`: a size named for its role scores 2, a number equal to its role's known
// size 1, a name for another role -2 (an order that puts a head's width where the positions are is unlikely).
int fit(const std::vector<Role>& order, const std::vector<std::string>& dims, const Sizes& sz, long heads) {
    int score = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        const Role r = role_of(dims[i]), t = order[i];
        const bool same_width = heads == 1 && ((r == Role::d_model && t == Role::d_head) || (r == Role::d_head && t == Role::d_model));
        if (r == t) score += 2;
        else if (same_width) score += 1;
        else if (r != Role::unknown) score -= 2;
        else if (is_number(dims[i]) && sz.role.count(t) && sz.role.at(t) == std::stol(dims[i])) score += 1;
    }
    return score;
}

long value_of(const std::string& dim, Role slot, const Sizes& sz) {
    if (is_number(dim)) return std::stol(dim);
    if (auto it = sz.named.find(normal(dim)); it != sz.named.end()) return it->second;
    const Role r = role_of(dim);
    if (r != Role::unknown && sz.role.count(r)) return sz.role.at(r);
    return sz.role.count(slot) ? sz.role.at(slot) : 0;
}

std::string dims_text(const std::vector<std::string>& dims) {
    std::string s;
    for (const auto& d : dims) s += (s.empty() ? "" : ", ") + d;
    return "(" + s + ")";
}

}  // namespace

std::optional<Draft> draft_shapes(const Article& art, const std::string& id) {
    std::vector<Stated> stated;
    for (const auto& s : art.shapes) {
        const std::string step = shape_step(s.name, s.note);
        if (!step.empty()) stated.push_back({&s, step, {}});
    }
    if (stated.empty()) return std::nullopt;
    Draft d;
    Sizes sz;
    // the sizes the article assigns, the first of each name and each role
    for (const auto& s : art.sizes) {
        const std::string n = normal(s.name);
        if (!sz.named.count(n)) sz.named[n] = s.value;
        const Role r = role_of(s.name);
        if (r != Role::unknown && !sz.role.count(r)) {
            sz.role[r] = s.value;
            sz.from[r] = fmt::format("{} = {} ({})", s.name, s.value, s.place.describe());
        }
    }
    for (const auto& [config, r] : std::array<std::pair<const char*, Role>, 3>{{{"d_model", Role::d_model}, {"d_k", Role::d_head}, {"heads", Role::heads}}})
        if (const long v = art.setting(config); v > 0 && !sz.role.count(r)) {
            sz.role[r] = v;
            sz.from[r] = fmt::format("{} = {}", config, v);
        }
    // heads: stated, else 2 when a shape names them (so that the head axis shows), else 1
    long heads = sz.role.count(Role::heads) ? sz.role[Role::heads] : 0;
    if (!heads) {
        heads = 1;
        for (const auto& st : stated)
            for (const auto& dim : st.shape->dims) heads = role_of(dim) == Role::heads ? kDefaultHeads : heads;
    }
    // a head's width from the model's width and the heads the article assigns, before any printed number
    if (sz.role.count(Role::d_model) && sz.role.count(Role::heads) && !sz.role.count(Role::d_head) &&
        sz.role[Role::d_model] % sz.role[Role::heads] == 0) {
        sz.role[Role::d_head] = sz.role[Role::d_model] / sz.role[Role::heads];
        sz.from[Role::d_head] = "d_model / heads";
    }
    // each shape's order, and the sizes its numbers give the roles still unknown
    for (auto& st : stated) {
        int best = -1000;
        for (const auto& order : orders_of(st.step)) {
            if (order.size() != st.shape->dims.size()) continue;
            const int f = fit(order, st.shape->dims, sz, heads);
            if (f > best) best = f, st.order = order;
        }
        for (std::size_t i = 0; i < st.order.size(); ++i)
            if (is_number(st.shape->dims[i]) && !sz.role.count(st.order[i])) {
                sz.role[st.order[i]] = std::stol(st.shape->dims[i]);
                sz.from[st.order[i]] = fmt::format("printed at {}", st.shape->place.describe());
            }
    }
    if (sz.role.count(Role::heads)) heads = sz.role[Role::heads];
    // the rest chosen: the article's tokens, else a few; a head's width distinct from the other sizes
    long tokens = sz.role.count(Role::seq) ? sz.role[Role::seq] : 0;
    if (!tokens) {
        tokens = kDefaultTokens;
        for (const auto& t : art.tokens)  // the article's own, when as many are no other size
            if (const long n = static_cast<long>(t.words.size());
                n >= 3 && n <= kMaxTokens && n != heads && (!sz.role.count(Role::d_model) || n != sz.role[Role::d_model]) &&
                (!sz.role.count(Role::d_head) || n != sz.role[Role::d_head])) {
                tokens = n;
                break;
            }
    }
    long d_model = sz.role.count(Role::d_model) ? sz.role[Role::d_model] : 0;
    long d_head = sz.role.count(Role::d_head) ? sz.role[Role::d_head] : 0;
    if (!d_head && d_model && d_model % heads == 0) d_head = d_model / heads;
    if (!d_head) {
        d_head = kDefaultHeadWidth;
        while (d_head == tokens || d_head == heads || d_head * heads == tokens) ++d_head;
    }
    if (!d_model) d_model = d_head * heads;
    sz.role[Role::seq] = tokens, sz.role[Role::heads] = heads, sz.role[Role::d_head] = d_head, sz.role[Role::d_model] = d_model;
    if (d_model > kMaxWidth || tokens > kMaxTokens || heads > kMaxHeads || d_head > kMaxWidth || heads * d_head > 4 * kMaxWidth) {
        d.reasons.push_back(fmt::format("the shapes the article states are not drafted: their sizes (d_model {}, {} tokens, {} heads of {}) "
                                        "are past what a shape lesson runs at (d_model {}, {} tokens, {} heads)",
                                        d_model, tokens, heads, d_head, kMaxWidth, kMaxTokens, kMaxHeads));
        return std::nullopt;
    }
    // the lesson
    const std::string doc = std::filesystem::path(art.file).filename().string();
    std::vector<std::string> words;
    for (const auto& t : art.tokens)
        if (static_cast<long>(t.words.size()) == tokens) {
            words = t.words;
            break;
        }
    if (words.empty())
        for (long i = 0; i < tokens; ++i) words.push_back(fmt::format("t{}", i + 1));
    bool projected = false;
    for (const auto& st : stated) projected = projected || st.step == "blocks.0.hook_attn_out";
    OrderedJson l = {{"format", "attntrace-lesson"}, {"version", 1}, {"id", id}, {"title", "The shapes stated in " + doc},
                     {"source", {{"document", doc}}}};
    std::string said;
    for (Role r : {Role::batch, Role::seq, Role::d_model, Role::heads, Role::d_head})
        if (sz.from.count(r)) said += fmt::format("{}{} from {}", said.empty() ? "" : "; ", role_name(r), sz.from[r]);
    l["description"] = fmt::format(
        "The article states the shapes of its arrays: this lesson runs random embeddings and weights at the sizes it states "
        "({} tokens, d_model {}, {} head{} of {}) and checks each stated shape. {}{}The trace is one sequence: a batch axis "
        "is not checked.",
        tokens, d_model, heads, heads == 1 ? "" : "s", d_head, said.empty() ? "" : "Sizes: " + said + ". ",
        said.empty() ? "The article assigns no size: these are chosen small and distinct, so that a size in the wrong place "
                       "shows as a wrong extent. "
                     : "");
    l["tokens"] = words;
    OrderedJson config = {{"d_model", d_model}, {"heads", heads}, {"mask", "none"}, {"scale", true}};
    if (d_head * heads != d_model) config["d_k"] = d_head;
    l["config"] = config;
    l["run"] = {{"from", "embed"}, {"to", projected ? "out" : "mix"}};
    l["inputs"] = {{"X", {{"generate", "normal"}, {"seed", 1}}}};
    l["weights_seed"] = 1;
    std::unique_ptr<Evaluation> e;
    try {
        e = run_lesson(l);
    } catch (const InputError& err) {
        d.reasons.push_back(std::string("the shapes the article states are not drafted: ") + err.what());
        return std::nullopt;
    }
    OrderedJson claims = OrderedJson::array();
    std::map<std::string, int> ids;
    for (const auto& st : stated) {
        const Step* step = nullptr;
        for (const Step& s : e->exact.steps)
            if (s.name == st.step) step = &s;
        if (!step || st.order.empty()) {
            d.reasons.push_back(fmt::format("the shape {} of {} at {} is not claimed: no order of {}'s axes has {} sizes",
                                            dims_text(st.shape->dims), st.shape->name, st.shape->place.describe(), st.step,
                                            st.shape->dims.size()));
            continue;
        }
        OrderedJson shape = OrderedJson::object();
        std::vector<std::string> used, read;
        std::string left;
        for (std::size_t i = 0; i < st.order.size(); ++i) {
            const Role slot = st.order[i];
            std::string axis;
            if (slot == Role::heads) {
                for (const auto& a : step->axes)
                    if (a == "head" || a == "kv_head") axis = a;
            } else if (slot == Role::seq) {
                for (const auto& a : step->axes)
                    if ((a == "pos" || a == "query" || a == "key") && std::find(used.begin(), used.end(), a) == used.end()) {
                        axis = a;
                        break;
                    }
            } else if (slot == Role::d_head || slot == Role::d_model) {
                const std::string want = slot == Role::d_head ? "d_head" : "d_model", other = slot == Role::d_head ? "d_model" : "d_head";
                if (std::find(step->axes.begin(), step->axes.end(), want) != step->axes.end()) axis = want;
                else if (heads == 1 && std::find(step->axes.begin(), step->axes.end(), other) != step->axes.end()) axis = other;
            }
            if (slot == Role::batch) {
                left += fmt::format(" Its batch axis ({}) is not traced: a run is one sequence.", st.shape->dims[i]);
                read.push_back("batch");
                continue;
            }
            if (axis.empty()) {
                left += fmt::format(" {} (the heads side by side) is not an axis of {}: not checked.", st.shape->dims[i], st.step);
                read.push_back("-");
                continue;
            }
            used.push_back(axis);
            read.push_back(axis);
            shape[axis] = value_of(st.shape->dims[i], slot, sz);
        }
        if (shape.empty()) continue;
        std::string as;
        for (const auto& r : read) as += (as.empty() ? "" : ", ") + r;
        OrderedJson c = {{"id", claim_id(st.shape->name + "-shape", ids)}, {"step", st.step}, {"shape", shape}, {"expect", "agrees"},
                         {"quote", st.shape->quote},
                         {"note", fmt::format("drafted from {}: the article's {} read as ({}).{}", st.shape->place.describe(),
                                              dims_text(st.shape->dims), as, left)}};
        d.reasons.push_back(fmt::format("claim {}: the shape {} of {} at {} on {} as ({})", c["id"].get<std::string>(),
                                        dims_text(st.shape->dims), st.shape->name, st.shape->place.describe(), st.step, as));
        claims.push_back(std::move(c));
    }
    if (claims.empty()) return std::nullopt;
    l["claims"] = std::move(claims);
    d.lesson = std::move(l);
    d.start = "the shapes the article states";
    d.reasons.insert(d.reasons.begin(), fmt::format("the shapes: {} tokens, d_model {}, {} head{} of {}{}", tokens, d_model, heads,
                                                    heads == 1 ? "" : "s", d_head, said.empty() ? " (chosen: the article assigns no size)" : "; " + said));
    return d;
}

}  // namespace attntrace
