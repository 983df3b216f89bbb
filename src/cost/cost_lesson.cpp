// Cost lesson file -> validated CostLesson, and its claims checked against the
// closed forms of cost.cpp. Format: docs/cost.md, "Cost lessons".
#include "cost/cost_lesson.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/decimal.hpp"
#include "core/error.hpp"
#include "core/json_field.hpp"
#include "io/data_dir.hpp"

namespace attntrace {

namespace {

// Bounds on a spec, far above any model and far below what overflows the
// closed forms (n² of n = 2^30 is 2^60; x NH x L x B stays a finite double).
constexpr std::int64_t kMaxCostTokens = std::int64_t{1} << 30;
constexpr std::int64_t kMaxCostWidth = std::int64_t{1} << 24;  // d_model, d_ff
constexpr std::int64_t kMaxCostCount = std::int64_t{1} << 20;  // heads, layers, batch
constexpr int kMaxCostDecimals = 6;

struct QuantityName {
    CostQuantity q;
    const char* name;
    CostUnit::Kind kind;
};
constexpr QuantityName kQuantities[] = {
    {CostQuantity::matrix_entries, "matrix_entries", CostUnit::Kind::count},
    {CostQuantity::scores_needed, "scores_needed", CostUnit::Kind::count},
    {CostQuantity::matrix_bytes, "matrix_bytes", CostUnit::Kind::bytes},
    {CostQuantity::model_scores, "model_scores", CostUnit::Kind::count},
    {CostQuantity::model_scores_needed, "model_scores_needed", CostUnit::Kind::count},
    {CostQuantity::model_matrix_bytes, "model_matrix_bytes", CostUnit::Kind::bytes},
    {CostQuantity::layer_flops, "layer_flops", CostUnit::Kind::count},
    {CostQuantity::model_flops, "model_flops", CostUnit::Kind::count},
    {CostQuantity::full_trace_bytes, "full_trace_bytes", CostUnit::Kind::bytes},
    {CostQuantity::materialized_bytes, "materialized_bytes", CostUnit::Kind::bytes},
    {CostQuantity::streaming_bytes, "streaming_bytes", CostUnit::Kind::bytes},
};

const CostUnit kUnits[] = {
    {"", 1, CostUnit::Kind::count},           {"thousand", 1e3, CostUnit::Kind::count},
    {"million", 1e6, CostUnit::Kind::count},  {"billion", 1e9, CostUnit::Kind::count},
    {"trillion", 1e12, CostUnit::Kind::count}, {"Ki", 1024.0, CostUnit::Kind::count},
    {"Mi", 1048576.0, CostUnit::Kind::count}, {"Gi", 1073741824.0, CostUnit::Kind::count},
    {"B", 1, CostUnit::Kind::bytes},           {"KB", 1e3, CostUnit::Kind::bytes},
    {"MB", 1e6, CostUnit::Kind::bytes},        {"GB", 1e9, CostUnit::Kind::bytes},
    {"TB", 1e12, CostUnit::Kind::bytes},       {"KiB", 1024.0, CostUnit::Kind::bytes},
    {"MiB", 1048576.0, CostUnit::Kind::bytes}, {"GiB", 1073741824.0, CostUnit::Kind::bytes},
    {"TiB", 1099511627776.0, CostUnit::Kind::bytes}, {"x", 1, CostUnit::Kind::ratio},
};

CostUnit::Kind quantity_kind(CostQuantity q) {
    for (const auto& e : kQuantities)
        if (e.q == q) return e.kind;
    return CostUnit::Kind::count;
}

std::string unit_list(CostUnit::Kind kind) {
    std::string out;
    for (const auto& u : kUnits)
        if (u.kind == kind) out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", u.name);
    return out;
}

class CostLessonReader {
public:
    CostLessonReader(const json& doc, const std::string& file) : doc_(doc), f_(file) { lesson_.file = file; }

    CostLesson read() {
        f_.object(doc_, "");
        f_.only_keys(doc_, "", {"format", "version", "id", "title", "source", "description", "spec", "claims"});
        header();
        lesson_.spec = spec(f_.member(doc_, "", "spec"), "spec", CostSpec{});
        const json& claims = f_.member(doc_, "", "claims");
        if (!claims.is_array() || claims.empty()) f_.fail("claims", "a non-empty array of claims", describe(claims));
        std::set<std::string> ids;
        for (std::size_t i = 0; i < claims.size(); ++i) {
            CostClaim c = claim(claims[i], index("claims", i));
            if (!ids.insert(c.id).second)
                f_.fail(index("claims", i) + ".id", "an id used by no other claim", "\"" + c.id + "\" again");
            lesson_.claims.push_back(std::move(c));
        }
        return std::move(lesson_);
    }

private:
    const json& doc_;
    Fields f_;
    CostLesson lesson_;

    void header() {
        if (f_.string(f_.member(doc_, "", "format"), "format") != "attntrace-cost-lesson")
            f_.fail("format", "\"attntrace-cost-lesson\"", describe(doc_["format"]));
        f_.integer(f_.member(doc_, "", "version"), "version", kCostLessonFormatVersion, kCostLessonFormatVersion);
        lesson_.id = f_.string(f_.member(doc_, "", "id"), "id");
        if (lesson_.id.empty() || !std::all_of(lesson_.id.begin(), lesson_.id.end(), [](char ch) {
                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
            }))
            f_.fail("id", "letters, digits, '-', '_' or '.'", describe(doc_["id"]));
        lesson_.title = f_.string(f_.member(doc_, "", "title"), "title");
        if (auto* d = f_.optional(doc_, "description")) lesson_.description = f_.string(*d, "description");
        const json& src = f_.object(f_.member(doc_, "", "source"), "source");
        f_.only_keys(src, "source", {"document", "title", "section"});
        lesson_.source.document = f_.string(f_.member(src, "source", "document"), "source.document");
        if (auto* t = f_.optional(src, "title")) lesson_.source.title = f_.string(*t, "source.title");
        if (auto* s = f_.optional(src, "section")) lesson_.source.section = f_.string(*s, "source.section");
    }

    std::uint64_t count(const json& obj, const std::string& path, const char* key, std::int64_t lo, std::int64_t hi) {
        return static_cast<std::uint64_t>(f_.integer(obj[key], join(path, key), lo, hi));
    }

    // A spec object: every field optional, each overriding `base`.
    CostSpec spec(const json& v, const std::string& path, CostSpec base) {
        f_.object(v, path);
        f_.only_keys(v, path, {"tokens", "d_model", "heads", "kv_heads", "d_ff", "layers", "batch", "dtype",
                               "attention", "window"});
        if (v.contains("tokens")) base.tokens = count(v, path, "tokens", 1, kMaxCostTokens);
        if (v.contains("d_model")) base.d_model = count(v, path, "d_model", 1, kMaxCostWidth);
        if (v.contains("heads")) base.heads = count(v, path, "heads", 1, kMaxCostCount);
        if (v.contains("kv_heads")) base.kv_heads = count(v, path, "kv_heads", 1, kMaxCostCount);
        if (v.contains("d_ff")) base.d_ff = count(v, path, "d_ff", 0, kMaxCostWidth);
        if (v.contains("layers")) base.layers = count(v, path, "layers", 1, kMaxCostCount);
        if (v.contains("batch")) base.batch = count(v, path, "batch", 1, kMaxCostCount);
        if (v.contains("window")) base.window_size = count(v, path, "window", 1, kMaxCostTokens);
        if (auto* d = f_.optional(v, "dtype")) {
            const std::string s = f_.string(*d, join(path, "dtype"));
            if (s == "fp32") base.dtype = DType::fp32;
            else if (s == "fp16") base.dtype = DType::fp16;
            else if (s == "bf16") base.dtype = DType::bf16;
            else f_.fail(join(path, "dtype"), "\"fp32\", \"fp16\" or \"bf16\"", describe(*d));
        }
        if (auto* a = f_.optional(v, "attention")) {
            const std::string s = f_.string(*a, join(path, "attention"));
            if (s == "full") base.window = Window::full;
            else if (s == "causal") base.window = Window::causal;
            else if (s == "window") base.window = Window::symmetric;
            else if (s == "causal-window") base.window = Window::causal_window;
            else f_.fail(join(path, "attention"), "\"full\", \"causal\", \"window\" or \"causal-window\"", describe(*a));
        }
        return base;
    }

    // The claim's spec must make sense on its own (heads dividing d_model, ...).
    void require_consistent(const CostSpec& s, const std::string& path) {
        try {
            (void)estimate_cost(s, "cost");
        } catch (const InputError& e) {
            f_.fail(path, "a consistent spec: " + e.expected(), e.found());
        }
    }

    CostQuantity quantity(const json& v, const std::string& path) {
        const std::string s = f_.string(v, path);
        for (const auto& e : kQuantities)
            if (s == e.name) return e.q;
        std::string names;
        for (const auto& e : kQuantities) names += fmt::format("{}{}", names.empty() ? "" : ", ", e.name);
        f_.fail(path, "one of " + names, describe(v));
    }

    CostUnit unit(const json& v, const std::string& path, CostUnit::Kind kind) {
        const std::string s = f_.string(v, path);
        for (const auto& u : kUnits)
            if (u.name == s && u.kind == kind) return u;
        const char* what = kind == CostUnit::Kind::bytes ? "a unit of bytes" : kind == CostUnit::Kind::ratio ? "a ratio's unit" : "a unit of counts";
        f_.fail(path, fmt::format("{}: {}", what, unit_list(kind)), describe(v));
    }

    CostClaim claim(const json& v, const std::string& path) {
        f_.object(v, path);
        CostClaim c;
        c.answer = v.contains("answer");
        if (c.answer)
            f_.only_keys(v, path, {"id", "answer", "spec", "over", "quantity", "unit", "decimals", "quote", "note"});
        else
            f_.only_keys(v, path, {"id", "spec", "over", "quantity", "unit", "decimals", "value", "round_first",
                                   "expect", "quote", "note"});
        c.id = f_.string(f_.member(v, path, "id"), join(path, "id"));
        if (c.answer && !f_.boolean(v["answer"], join(path, "answer")))
            f_.fail(join(path, "answer"), "true (a question the article asks), or no \"answer\" field", "false");
        c.spec = v.contains("spec") ? spec(v["spec"], join(path, "spec"), lesson_.spec) : lesson_.spec;
        require_consistent(c.spec, v.contains("spec") ? join(path, "spec") : "spec");
        if (auto* o = f_.optional(v, "over")) {
            c.over = spec(*o, join(path, "over"), c.spec);
            require_consistent(*c.over, join(path, "over"));
        }
        c.quantity = quantity(f_.member(v, path, "quantity"), join(path, "quantity"));
        c.unit = unit(f_.member(v, path, "unit"), join(path, "unit"),
                      c.over ? CostUnit::Kind::ratio : quantity_kind(c.quantity));
        c.decimals = static_cast<int>(f_.integer(f_.member(v, path, "decimals"), join(path, "decimals"), 0, kMaxCostDecimals));
        if (auto* q = f_.optional(v, "quote")) c.quote = f_.string(*q, join(path, "quote"));
        if (auto* n = f_.optional(v, "note")) c.note = f_.string(*n, join(path, "note"));
        if (c.answer) return c;
        c.value = f_.number(f_.member(v, path, "value"), join(path, "value"));
        auto expect = verdict_from_name(f_.string(f_.member(v, path, "expect"), join(path, "expect")));
        if (!expect || *expect == Verdict::not_checkable || *expect == Verdict::agrees_from_given)
            f_.fail(join(path, "expect"), "agrees, agrees-when-rounded or disagrees (a cost is always checkable, and gives nothing)",
                    describe(v["expect"]));
        c.expect = *expect;
        if (auto* r = f_.optional(v, "round_first")) {
            const std::string rp = join(path, "round_first");
            if (!r->is_array() || r->empty()) f_.fail(rp, "a non-empty array of roundings", describe(*r));
            for (std::size_t i = 0; i < r->size(); ++i) c.round_first.push_back(rounding((*r)[i], index(rp, i)));
        }
        return c;
    }

    CostRounding rounding(const json& v, const std::string& path) {
        f_.object(v, path);
        f_.only_keys(v, path, {"quantity", "unit", "decimals", "mode"});
        CostRounding r;
        r.quantity = quantity(f_.member(v, path, "quantity"), join(path, "quantity"));
        if (r.quantity != CostQuantity::matrix_entries && r.quantity != CostQuantity::scores_needed)
            f_.fail(join(path, "quantity"), "matrix_entries or scores_needed (the intermediates the others are made of)",
                    describe(v["quantity"]));
        r.unit = unit(f_.member(v, path, "unit"), join(path, "unit"), CostUnit::Kind::count);
        r.decimals = static_cast<int>(f_.integer(f_.member(v, path, "decimals"), join(path, "decimals"), 0, kMaxCostDecimals));
        if (auto* m = f_.optional(v, "mode")) {
            const std::string s = f_.string(*m, join(path, "mode"));
            if (s == "down") r.down = true;
            else if (s != "nearest") f_.fail(join(path, "mode"), "\"nearest\" (the default) or \"down\" (truncated)", describe(*m));
        }
        return r;
    }
};

// Half away from zero (or toward zero when `down`), in double: the cost
// figures are far beyond float's 7 digits.
double round_to(double x, int decimals, bool down) {
    const double scale = std::pow(10.0, decimals);
    return (down ? std::trunc(x * scale) : std::round(x * scale)) / scale;
}

// A printed p with d decimals agrees with x when x rounds to p (ties agree).
bool agrees(double x, double printed, int decimals) {
    const double half = 0.5 * std::pow(10.0, -decimals);
    return std::fabs(x - printed) <= half * (1 + 1e-12);
}

// The quantity in raw units (entries, bytes, FLOPs), the intermediates
// rounded as `round_first` says (none: exact).
double raw_quantity(const CostSpec& s, CostQuantity q, const std::vector<CostRounding>& round_first) {
    const CostReport r = estimate_cost(s, "cost");
    double entries = r.scores_per_matrix, needed = r.scores_needed;
    for (const auto& rf : round_first) {
        double& x = rf.quantity == CostQuantity::matrix_entries ? entries : needed;
        x = round_to(x / rf.unit.scale, rf.decimals, rf.down) * rf.unit.scale;
    }
    const bool windowed = s.window == Window::symmetric || s.window == Window::causal_window;
    const double stored = windowed ? needed : entries;
    const double copies = double(s.heads) * double(s.layers) * double(s.batch);
    const double bytes = double(dtype_bytes(s.dtype));
    switch (q) {
        case CostQuantity::matrix_entries: return entries;
        case CostQuantity::scores_needed: return needed;
        case CostQuantity::matrix_bytes: return stored * bytes;
        case CostQuantity::model_scores: return entries * copies;
        case CostQuantity::model_scores_needed: return needed * copies;
        case CostQuantity::model_matrix_bytes: return stored * bytes * copies;
        case CostQuantity::layer_flops: return r.layer_flops;
        case CostQuantity::model_flops: return r.model_flops;
        case CostQuantity::full_trace_bytes: return r.full_trace_bytes;
        case CostQuantity::materialized_bytes: return r.materialized_bytes;
        case CostQuantity::streaming_bytes: return r.streaming_bytes;
    }
    return 0;
}

double in_unit(const CostClaim& c, const std::vector<CostRounding>& round_first) {
    const double v = raw_quantity(c.spec, c.quantity, round_first);
    if (c.over) return v / raw_quantity(*c.over, c.quantity, round_first);
    return v / c.unit.scale;
}

}  // namespace

bool is_cost_lesson(const json& doc) {
    return doc.is_object() && doc.contains("format") && doc["format"] == "attntrace-cost-lesson";
}

CostLesson parse_cost_lesson(const json& doc, const std::string& file) { return CostLessonReader(doc, file).read(); }

CostLesson read_cost_lesson(const std::string& path) { return parse_cost_lesson(load_json_file(path), path); }

std::vector<std::string> list_cost_lesson_files() {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(lessons_dir()) / "cost", ec))
        if (e.path().extension() == ".json") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

const char* cost_quantity_name(CostQuantity q) {
    for (const auto& e : kQuantities)
        if (e.q == q) return e.name;
    return "?";
}

std::string describe_spec(const CostSpec& s) {
    std::string out = fmt::format("n {}, d_model {}, heads {}", s.tokens, s.d_model, s.heads);
    if (s.kv_heads && s.kv_heads != s.heads) out += fmt::format(", kv_heads {}", s.kv_heads);
    if (s.layers != 1) out += fmt::format(", layers {}", s.layers);
    if (s.batch != 1) out += fmt::format(", batch {}", s.batch);
    if (s.d_ff) out += fmt::format(", d_ff {}", s.d_ff);
    switch (s.window) {
        case Window::full: break;
        case Window::causal: out += ", causal"; break;
        case Window::symmetric: out += fmt::format(", window {}", s.window_size); break;
        case Window::causal_window: out += fmt::format(", causal window {}", s.window_size); break;
    }
    return out + ", " + dtype_name(s.dtype);
}

CostCheckReport check_cost_lesson(const CostLesson& lesson) {
    CostCheckReport report;
    for (const CostClaim& c : lesson.claims) {
        CostClaimResult r;
        r.claim = c;
        r.exact = in_unit(c, {});
        if (!c.round_first.empty()) r.document = in_unit(c, c.round_first);
        if (!c.answer) {
            if (agrees(r.exact, c.value, c.decimals)) r.verdict = Verdict::agrees;
            else if (r.document && agrees(*r.document, c.value, c.decimals)) r.verdict = Verdict::agrees_when_rounded;
            else r.verdict = Verdict::disagrees;
        }
        report.results.push_back(r);
    }
    return report;
}

bool CostCheckReport::all_as_expected() const {
    return std::all_of(results.begin(), results.end(), [](const auto& r) { return r.as_expected(); });
}

}  // namespace attntrace
