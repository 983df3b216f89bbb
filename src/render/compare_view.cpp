#include "render/compare_view.hpp"

#include "render/difference_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/printable.hpp"
#include "render/matrix.hpp"
#include "render/text.hpp"

namespace attntrace {

namespace {

std::string setting_value(const std::optional<nlohmann::json>& v, const char* absent) {
    return v ? v->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : absent;
}

std::string source_note(const StepChange& s) {
    const bool ga = s.a && s.a->source == StepSource::given, gb = s.b && s.b->source == StepSource::given;
    if (ga && gb) return " (given in A and B)";
    if (ga) return " (given in A)";
    if (gb) return " (given in B)";
    return "";
}

// One line of the step list, after the name.
std::string change_text(const StepChange& s) {
    switch (s.change) {
        case Change::unchanged: return "unchanged" + source_note(s);
        case Change::changed: {
            const DiffCell &m = *s.diff.max_abs, &q = *s.diff.max_rel;
            return fmt::format("changed: {} of {} cells; max |Δ| {} at [{}] (A {}, B {}); max rel {} at [{}]{}",
                               s.diff.beyond, s.diff.cells, error_text(m.abs, 4), cell_labels(*s.a, m.index),
                               value_text(m.a), value_text(m.b), error_text(q.rel, 4), cell_labels(*s.a, q.index),
                               source_note(s));
        }
        case Change::shape_changed:
            return fmt::format("shape changed: A {}, B {}", shape_str(s.a->shape), shape_str(s.b->shape));
        case Change::only_a: return "only in A";
        case Change::only_b: return "only in B";
        case Change::not_computable: return s.note;
    }
    return "?";
}

OrderedJson cell_json(const std::optional<DiffCell>& c, const Step& s) {
    if (!c) return nullptr;
    OrderedJson j;
    j["at"] = c->index;
    std::vector<std::string> labels;
    for (std::size_t k = 0; k < c->index.size(); ++k)
        labels.push_back(k < s.labels.size() && c->index[k] < s.labels[k].size() ? s.labels[k][c->index[k]]
                                                                                  : std::to_string(c->index[k]));
    j["labels"] = labels;
    j["a"] = difference_json(c->a);
    j["b"] = difference_json(c->b);
    j["abs"] = difference_json(c->abs);
    j["rel"] = difference_json(c->rel);
    return j;
}

const Change kOrder[] = {Change::unchanged,  Change::changed, Change::shape_changed,
                         Change::only_a,     Change::only_b,  Change::not_computable};

std::string counts_text(const Comparison& c) {
    return fmt::format("{} unchanged, {} changed, {} changed shape, {} only in A, {} only in B, {} not computable",
                       c.count(Change::unchanged), c.count(Change::changed), c.count(Change::shape_changed),
                       c.count(Change::only_a), c.count(Change::only_b), c.count(Change::not_computable));
}

void render_values(std::ostream& out, const char* caption, const Step& s, const Tensor& t, const CompareView& view,
                   bool heat) {
    TableOptions table;
    table.precision = view.precision;
    table.full = view.full;
    table.width = view.style.width;
    out << caption << "\n" << format_tensor(t, s.axes, s.labels, table);
    if (heat && view.heatmap && heatmapped(s)) {
        HeatmapOptions h;
        h.style = view.style;
        h.mode = view.heatmap_mode;
        h.full = view.full;
        h.auto_range = computes(s, Leaf::attn_scores);
        h.mask = computes(s, Leaf::mask);
        out << "    heatmap:\n" << format_heatmap(t, s.axes, s.labels, h);
    }
}

bool has_values(const Step* s) { return s && s->source != StepSource::not_computable && s->recorded == Record::full; }

void render_shown(std::ostream& out, const LessonPair& pair, const Comparison& c, const StepChange& s, bool chosen,
                  const CompareView& view) {
    const Step& any = s.a ? *s.a : *s.b;
    std::string axes;
    for (std::size_t k = 0; k < any.axes.size(); ++k) axes += (k ? " x " : "") + any.axes[k];
    out << fmt::format("\n── {} — {}  [{}: {}]{}\n", printable(s.name), any.def ? any.def->title : "", change_name(s.change),
                       axes, chosen ? "" : "  (the first step that changed; --step NAME shows another)");
    if (any.def) out << "    " << any.def->formula << "\n";
    const std::string a_caption = fmt::format("  A{}:", s.a ? " [" + shape_str(s.a->shape) + "]" : "");
    const std::string b_caption = fmt::format("  B{} ({}):", s.b ? " [" + shape_str(s.b->shape) + "]" : "", printable(pair.sets));
    const std::optional<StepValues> a = has_values(s.a) ? std::optional<StepValues>(c.values_a(s)) : std::nullopt;
    const std::optional<StepValues> b = has_values(s.b) ? std::optional<StepValues>(c.values_b(s)) : std::nullopt;
    if (a) render_values(out, a_caption.c_str(), *s.a, **a, view, true);
    else out << a_caption << " " << (s.a ? printable(s.a->note) : "not recorded") << "\n";
    if (b) render_values(out, b_caption.c_str(), *s.b, **b, view, true);
    else out << b_caption << " " << (s.b ? printable(s.b->note) : "not recorded") << "\n";
    if (a && b && (s.change == Change::changed || s.change == Change::unchanged))
        render_values(out, "  B - A (0 where equal; inf where one side is masked):", *s.a, delta(**a, **b), view, false);
}

}  // namespace

void render_compare(std::ostream& out, const LessonPair& pair, const Comparison& c, std::optional<std::size_t> shown,
                    bool chosen, const CompareView& view) {
    // The lesson's text and the --set arguments, printable (core/printable.hpp).
    out << fmt::format("attntrace compare · {} — {}\n", printable(pair.a.id), printable(pair.a.title));
    out << fmt::format("A: {}\nB: {}\n", printable(pair.a.file), printable(pair.b_label));
    out << "\nsettings (A → B):\n";
    std::size_t w = 0;
    for (const auto& s : pair.settings) w = std::max(w, printable(s.path).size());
    for (const auto& s : pair.settings)
        out << fmt::format("  {:<{}}  {} → {}\n", printable(s.path), w, setting_value(s.before, "(not set: the default)"),
                           setting_value(s.after, "(removed: the default)"));
    out << fmt::format("\nsteps in pipeline order (A records {}, B {}; unchanged means equal in every cell):\n",
                       c.steps.size() - c.count(Change::only_b), c.steps.size() - c.count(Change::only_a));
    w = 0;
    for (const auto& s : c.steps) w = std::max(w, printable(s.name).size());
    for (const auto& s : c.steps) out << fmt::format("  {:<{}}  {}\n", printable(s.name), w, printable(change_text(s)));
    out << "\n" << counts_text(c) << "\n";
    if (shown) render_shown(out, pair, c, c.steps[*shown], chosen, view);
    else out << "\nno step changed: B computes every step of A, equal in every cell\n";
}

OrderedJson compare_to_json(const LessonPair& pair, const Comparison& c, std::optional<std::size_t> shown) {
    OrderedJson j;
    j["format"] = "attntrace-compare";
    j["version"] = kCompareReportVersion;
    j["lesson"] = pair.a.file;
    j["lesson_id"] = pair.a.id;
    j["b"] = pair.b_label;
    j["settings"] = OrderedJson::array();
    for (const auto& s : pair.settings) {
        OrderedJson x;
        x["set"] = s.setting.text;
        x["path"] = s.path;
        if (s.before) x["a"] = *s.before;  // absent: A does not set it (the default applies)
        if (s.after) x["b"] = *s.after;    // absent: the --set removed it
        j["settings"].push_back(std::move(x));
    }
    j["steps"] = OrderedJson::array();
    for (const auto& s : c.steps) {
        OrderedJson x;
        x["name"] = s.name;
        x["change"] = change_name(s.change);
        x["shape_a"] = s.a ? OrderedJson(s.a->shape) : OrderedJson(nullptr);
        x["shape_b"] = s.b ? OrderedJson(s.b->shape) : OrderedJson(nullptr);
        x["source_a"] = s.a ? OrderedJson(std::string(source_name(s.a->source))) : OrderedJson(nullptr);
        x["source_b"] = s.b ? OrderedJson(std::string(source_name(s.b->source))) : OrderedJson(nullptr);
        if (s.change == Change::changed || s.change == Change::unchanged) {
            x["cells"] = s.diff.cells;
            x["cells_changed"] = s.diff.beyond;
            x["max_abs"] = s.change == Change::changed ? cell_json(s.diff.max_abs, *s.a) : OrderedJson(nullptr);
            x["max_rel"] = s.change == Change::changed ? cell_json(s.diff.max_rel, *s.a) : OrderedJson(nullptr);
        }
        if (s.change == Change::not_computable) x["note"] = s.note;
        j["steps"].push_back(std::move(x));
    }
    OrderedJson counts;
    for (Change k : kOrder) counts[change_name(k)] = c.count(k);
    j["counts"] = counts;
    const auto first = c.first_change();
    j["first_change"] = first ? OrderedJson(c.steps[*first].name) : OrderedJson(nullptr);
    j["shown"] = nullptr;
    if (shown) {
        const StepChange& s = c.steps[*shown];
        OrderedJson x;
        x["step"] = s.name;
        const std::optional<StepValues> a = has_values(s.a) ? std::optional<StepValues>(c.values_a(s)) : std::nullopt;
        const std::optional<StepValues> b = has_values(s.b) ? std::optional<StepValues>(c.values_b(s)) : std::nullopt;
        x["a"] = a ? tensor_to_json(**a) : OrderedJson(nullptr);
        x["b"] = b ? tensor_to_json(**b) : OrderedJson(nullptr);
        x["delta"] = a && b && (s.change == Change::changed || s.change == Change::unchanged) ? tensor_to_json(delta(**a, **b))
                                                                                             : OrderedJson(nullptr);
        j["shown"] = x;
    }
    return j;
}

}  // namespace attntrace
