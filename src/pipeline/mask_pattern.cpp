// The mask's pattern: one rule per kind, filled into M or explained per cell.
#include "pipeline/mask_pattern.hpp"

#include <fmt/format.h>

#include <limits>

namespace attntrace {

namespace {

constexpr float kBlocked = -std::numeric_limits<float>::infinity();

std::size_t distance(std::size_t a, std::size_t b) { return a > b ? a - b : b - a; }

std::string list(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
    return "[" + s + "]";
}

}  // namespace

MaskPattern::MaskPattern(const Config& config, std::size_t Tq, std::size_t T)
    : kind_(config.mask), mask_at_(config.mask_at), m_(config.mask_spec), Tq_(Tq), T_(T), offset_(T >= Tq ? T - Tq : 0) {
    half_ = m_.window ? (m_.window - 1) / 2 : 0;
    const auto& marked = kind_ == MaskKind::global_local ? m_.global : m_.pad;
    if (kind_ == MaskKind::global_local || kind_ == MaskKind::padding) {
        special_.assign(T_, 0);
        for (std::size_t p : marked)
            if (p < T_) special_[p] = 1;
    }
}

bool MaskPattern::is_summary(std::size_t j) const {
    const std::size_t b = m_.block;
    if (!m_.summary_last) return j % b == 0;
    return j % b == b - 1 || j + 1 == T_;  // a short last block's summary is its last token
}

bool MaskPattern::allows(std::size_t i, std::size_t j) const {
    const std::size_t p = position(i);
    const MaskSpec& m = m_;
    switch (kind_) {
        case MaskKind::none: return true;
        case MaskKind::causal: return j <= p;
        case MaskKind::window:
            return m.causal ? j <= p && p - j < m.window : distance(p, j) <= half_;
        case MaskKind::global_local: return distance(p, j) <= half_ || special_[p] || special_[j];
        case MaskKind::block_sparse: return in_block(p, j) || is_summary(j);
        case MaskKind::padding: return !special_[j] && (!m.causal || j <= p);
        case MaskKind::custom: return m.allowed[i * T_ + j] != 0;
    }
    return true;
}

void MaskPattern::fill(float* out) const {
    const bool keep = mask_at_ == MaskAt::weights;
    const float visible = keep ? 1.0f : 0.0f, blocked = keep ? 0.0f : kBlocked;
    for (std::size_t i = 0; i < Tq_; ++i)
        for (std::size_t j = 0; j < T_; ++j) out[i * T_ + j] = allows(i, j) ? visible : blocked;
}

std::vector<std::string> MaskPattern::reason(std::size_t i, std::size_t j, const std::string& q,
                                             const std::string& k) const {
    const std::size_t p = position(i);
    const MaskSpec& m = m_;
    const bool ok = allows(i, j);
    const std::string where = fmt::format("query {} sits at position {}, key {} at position {}", q, p, k, j);
    std::vector<std::string> out;
    switch (kind_) {
        case MaskKind::none:
            out.push_back(fmt::format("no mask in this lesson (config.mask none): query {} sees every key, {} included", q, k));
            break;
        case MaskKind::causal:
            out.push_back("causal mask: " + where);
            out.push_back(ok ? "the key is not after the query: visible" : "the key comes after the query: blocked");
            break;
        case MaskKind::window:
            out.push_back(fmt::format("{} window of w = {}: {}", m.causal ? "causal" : "symmetric", m.window, where));
            if (m.causal)
                out.push_back(fmt::format("it sees keys {}..{} (the w latest, itself included): {} is {}",
                                          p + 1 >= m.window ? p + 1 - m.window : 0, p, j, ok ? "inside" : "outside"));
            else
                out.push_back(fmt::format("it sees keys with |p - j| <= (w-1)/2 = {}: |{} - {}| = {}, {}", half_, p, j,
                                          distance(p, j), ok ? "inside" : "outside"));
            break;
        case MaskKind::global_local:
            out.push_back(fmt::format("global + local, window w = {} (|p - j| <= {}), global positions {}: {}", m.window,
                                      half_, list(m.global), where));
            if (special_[p]) out.push_back(fmt::format("position {} is global: its row sees every key", p));
            else if (special_[j]) out.push_back(fmt::format("key position {} is global: every row sees it", j));
            else
                out.push_back(fmt::format("neither is global; |{} - {}| = {}: {} the window", p, j, distance(p, j),
                                          ok ? "inside" : "outside"));
            break;
        case MaskKind::block_sparse:
            out.push_back(fmt::format("block-sparse, blocks of {} positions, summary = each block's {} token: {}", m.block,
                                      m.summary_last ? "last" : "first", where));
            out.push_back(fmt::format("query block {}, key block {}{}", p / m.block, j / m.block,
                                      in_block(p, j)      ? ": the same block"
                                      : is_summary(j)     ? ": another block, but the key is its summary token"
                                                          : ": another block, and the key is not its summary token"));
            break;
        case MaskKind::padding:
            out.push_back(fmt::format("key padding mask{}, pad positions {}: {}", m.causal ? " with the causal mask" : "",
                                      list(m.pad), where));
            if (special_[j]) out.push_back(fmt::format("key position {} is padding: blocked for every query", j));
            else if (m.causal && j > p) out.push_back("a real key, but it comes after the query: blocked");
            else out.push_back("a real key" + std::string(m.causal ? ", not after the query" : "") + ": visible");
            break;
        case MaskKind::custom:
            out.push_back(fmt::format("custom mask: config.mask.allowed[{}][{}] = {}", i, j, ok ? 1 : 0));
            break;
    }
    if (mask_at_ == MaskAt::weights)
        out.push_back(ok ? "visible: 1 (the weight is kept)" : "blocked: 0 (the weight is zeroed after the normaliser)");
    else
        out.push_back(ok ? "visible: 0 (the score passes unchanged)" : "blocked: -inf (its weight will be exactly 0)");
    return out;
}

std::optional<KeyWindow> key_window(const Config& c) {
    const std::size_t w = c.mask_spec.window;
    switch (c.mask) {
        case MaskKind::none: return KeyWindow(false);
        case MaskKind::causal: return KeyWindow(true);
        case MaskKind::window: return c.mask_spec.causal ? KeyWindow(w - 1, 0) : KeyWindow((w - 1) / 2, (w - 1) / 2);
        default: return std::nullopt;
    }
}

std::string mask_text(const Config& c) {
    const MaskSpec& m = c.mask_spec;
    switch (c.mask) {
        case MaskKind::none: return "none";
        case MaskKind::causal: return "causal";
        case MaskKind::window:
            return m.causal ? fmt::format("causal window {} (keys p-{}..p)", m.window, m.window - 1)
                            : fmt::format("window {} (|p - j| <= {})", m.window, (m.window - 1) / 2);
        case MaskKind::global_local:
            return fmt::format("global + local (window {}, global {})", m.window, list(m.global));
        case MaskKind::block_sparse:
            return fmt::format("block-sparse (blocks of {}, summary {})", m.block, m.summary_last ? "last" : "first");
        case MaskKind::padding: return fmt::format("padding {}{}", list(m.pad), m.causal ? " + causal" : "");
        case MaskKind::custom: return "custom";
    }
    return "none";
}

}  // namespace attntrace
