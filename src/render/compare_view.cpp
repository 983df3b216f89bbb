#include "render/compare_view.hpp"

#include "render/difference_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/printable.hpp"
#include "render/matrix.hpp"
#include "render/text.hpp"
#include "render/wrap.hpp"

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

// The step list's one format for its differences and one for its values.
struct ListFormat {
    ErrorFormat errors;
    ValueFormat values;
    explicit ListFormat(const Comparison& c) {
        for (const auto& s : c.steps)
            if (s.change == Change::changed) {
                errors.add(s.diff.max_abs->abs);
                errors.add(s.diff.max_rel->rel);
                values.add(s.diff.max_abs->a);
                values.add(s.diff.max_abs->b);
            }
    }
};

// One line of the step list, after the name: printable (its labels and notes come from the lesson).
std::string change_text(const StepChange& s, const ListFormat& f) {
    switch (s.change) {
        case Change::unchanged: return "unchanged" + source_note(s);
        case Change::changed: {
            const DiffCell &m = *s.diff.max_abs, &q = *s.diff.max_rel;
            // Each part one word for the wrapping: "max |Δ| 0.2387 at [h0, the, ring]", "(A 0.6, B 0.3)".
            return fmt::format("changed: {} of {} cells; {} {}; {}{}", s.diff.beyond, s.diff.cells,
                               unbroken(fmt::format("max |Δ| {} at [{}]", f.errors(m.abs),
                                                    printable(cell_labels(*s.a, m.index)))),
                               unbroken(fmt::format("(A {}, B {})", f.values(m.a), f.values(m.b))),
                               unbroken(fmt::format("max rel {} at [{}]", f.errors(q.rel),
                                                    printable(cell_labels(*s.a, q.index)))),
                               source_note(s));
        }
        case Change::shape_changed:
            return fmt::format("shape changed: A {}, B {}", shape_str(s.a->shape), shape_str(s.b->shape));
        case Change::only_a: return "only in A";
        case Change::only_b: return "only in B";
        case Change::not_computable: return printable(s.note);
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

// The room a step's line keeps beside the names' column; a narrower width continues it 6 columns in.
constexpr std::size_t kLeastRoom = 24;

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
    out << wrap_text(std::string_view(caption).substr(2), view.style.width, "  ", "    ")  // caption: "  A [3x3]:"
        << format_tensor(t, s.axes, s.labels, table);
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
    const std::size_t width = view.style.width;
    out << "\n"
        << wrap_text(fmt::format("── {} — {}  {}{}", printable(s.name), title_of(any),
                                 unbroken(fmt::format("[{}: {}]", change_name(s.change), axes)),
                                 chosen ? "" : "  (the first step that changed; --step NAME shows another)"),
                     width, "", "   ");
    if (any.def) out << wrap_text(any.def->formula, width, "    ", "      ");
    const std::string a_caption = fmt::format("  A{}:", s.a ? " [" + shape_str(s.a->shape) + "]" : "");
    const std::string b_caption = fmt::format("  B{} ({}):", s.b ? " [" + shape_str(s.b->shape) + "]" : "", printable(pair.sets));
    const std::optional<StepValues> a = has_values(s.a) ? std::optional<StepValues>(c.values_a(s)) : std::nullopt;
    const std::optional<StepValues> b = has_values(s.b) ? std::optional<StepValues>(c.values_b(s)) : std::nullopt;
    if (a) render_values(out, a_caption.c_str(), *s.a, **a, view, true);
    else out << wrap_hanging(s.a ? printable(s.a->note) : "not recorded", width, a_caption + " ");
    if (b) render_values(out, b_caption.c_str(), *s.b, **b, view, true);
    else out << wrap_hanging(s.b ? printable(s.b->note) : "not recorded", width, b_caption + " ");
    if (a && b && (s.change == Change::changed || s.change == Change::unchanged))
        render_values(out, "  B - A (0 where equal; inf where one side is masked):", *s.a, delta(**a, **b), view, false);
}

}  // namespace

void render_compare(std::ostream& out, const LessonPair& pair, const Comparison& c, std::optional<std::size_t> shown,
                    bool chosen, const CompareView& view) {
    // The lesson's text and the --set arguments, printable (core/printable.hpp).
    const std::size_t width = view.style.width;
    out << wrap_text(fmt::format("attntrace compare · {} — {}", printable(pair.a.id), printable(pair.a.title)), width, "",
                     "    ");
    out << wrap_hanging(printable(pair.a.file), width, "A: ") << wrap_hanging(printable(pair.b_label), width, "B: ");
    out << "\nsettings (A → B):\n";
    std::size_t w = 0;
    for (const auto& s : pair.settings) w = std::max(w, printable(s.path).size());
    for (const auto& s : pair.settings)
        out << fmt::format("  {:<{}}  {} → {}\n", printable(s.path), w, setting_value(s.before, "(not set: the default)"),
                           setting_value(s.after, "(removed: the default)"));
    const ListFormat format(c);
    out << "\n"
        << wrap_text(fmt::format("steps in pipeline order (A records {}, B {}; unchanged means equal in every cell):",
                                 c.steps.size() - c.count(Change::only_b), c.steps.size() - c.count(Change::only_a)),
                     width, "", "  ");
    w = 0;
    for (const auto& s : c.steps) w = std::max(w, printable(s.name).size());
    for (const auto& s : c.steps)
        out << wrap_text(change_text(s, format), width, fmt::format("  {:<{}}  ", printable(s.name), w),
                         std::string(width && w + 4 + kLeastRoom > width ? 6 : w + 4, ' '));
    if (c.count(Change::changed))  // the list's legend: its numbers' formats
        out << wrap_text(
            fmt::format("(max |Δ| and max rel {}; A and B {})", format.errors.caption(), format.values.caption()), width,
            "", " ");
    out << "\n" << wrap_text(counts_text(c), width, "", "    ");
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
