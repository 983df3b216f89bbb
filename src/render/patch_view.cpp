#include "render/patch_view.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/printable.hpp"
#include "render/wrap.hpp"

namespace attntrace {

namespace {

std::string tokens_line(const Lesson& l) {
    std::vector<std::string> shown;
    for (const std::string& t : l.tokens) shown.push_back(printable(t));
    return fmt::format("{}", fmt::join(shown, " · "));
}

}  // namespace

void render_patch(std::ostream& out, const PatchInputs& in, const PatchResult& r, const TermStyle& style) {
    const std::size_t w = style.width;
    const Lesson& corrupt = *in.corrupt;
    const std::string answer = printable(corrupt.vocab_label(r.spec.answer)), wrong = printable(corrupt.vocab_label(r.spec.wrong));
    out << wrap_text(fmt::format("── activation patching: {} over {}, clean into corrupt", r.spec.step, r.spec.over), w, "", "   ");
    out << wrap_text("clean:   " + tokens_line(*in.clean), w, "    ", "             ");
    out << wrap_text("corrupt: " + tokens_line(corrupt), w, "    ", "             ");
    out << wrap_text(fmt::format("LD = logit['{}'] - logit['{}'] after the last token: clean {:.4f}, corrupt {:.4f}", answer,
                                 wrong, r.ld_clean, r.ld_corrupt),
                     w, "    ", "      ");
    out << wrap_text(fmt::format("each cell: the corrupt run with that {} of {} taken from the clean run, "
                                 "(LD - LD corrupt) / (LD clean - LD corrupt): 1 restores the clean answer, 0 changes nothing",
                                 r.spec.over == "heads" ? "head" : "position", r.spec.step),
                     w, "    ", "    ");
    std::vector<std::string> rows;
    // by the block patched (hook_resid_pre of block 1 is the step blocks.0.hook_resid_post)
    for (std::size_t b = 0; b < r.rows.size(); ++b) rows.push_back(fmt::format("blocks.{}", b));
    HeatmapOptions opt;
    opt.style = style;
    opt.auto_range = true;
    opt.full = true;
    opt.blockable = false;  // every patched run has a logit difference: no cell is blocked
    out << "\n"
        << format_heatmap(r.normalized, {"block", r.spec.over == "heads" ? "head" : "position"}, {rows, r.columns}, opt);
    const std::size_t patches = r.normalized.size();
    std::size_t passes = 0;
    for (std::size_t b = 0; b < r.passes_per_block.size(); ++b) passes += r.passes_per_block[b] * r.columns.size();
    out << wrap_text(fmt::format("{} patched runs, each started at its block (the blocks before it are the corrupt "
                                 "run's): {} passes in all, against {} for {} whole runs (--json gives the time)",
                                 patches, passes, r.passes_whole * patches, patches),
                     w, "    ", "    ");
}

OrderedJson patch_json(const PatchInputs& in, const PatchResult& r) {
    OrderedJson j;
    j["format"] = "attntrace-patch";
    j["version"] = kPatchReportVersion;
    j["model"] = in.model_dir;
    auto side = [](const Lesson& l, const std::string& text) {
        return OrderedJson{{"text", text}, {"tokens", l.tokens}, {"ids", l.token_ids}};
    };
    j["clean"] = side(*in.clean, in.clean_text);
    j["corrupt"] = side(*in.corrupt, in.corrupt_text);
    j["answer"] = {{"id", r.spec.answer}, {"token", in.corrupt->vocab_label(r.spec.answer)}};
    j["wrong"] = {{"id", r.spec.wrong}, {"token", in.corrupt->vocab_label(r.spec.wrong)}};
    j["step"] = r.spec.step;
    j["over"] = r.spec.over;
    j["logit_diff_clean"] = r.ld_clean;
    j["logit_diff_corrupt"] = r.ld_corrupt;
    j["rows"] = r.rows;
    j["columns"] = r.columns;
    auto matrix = [&](const Tensor& t) {
        OrderedJson m = OrderedJson::array();
        const std::size_t cols = r.columns.size();
        for (std::size_t b = 0; b < r.rows.size(); ++b)
            m.push_back(std::vector<float>(t.data.begin() + std::ptrdiff_t(b * cols), t.data.begin() + std::ptrdiff_t((b + 1) * cols)));
        return m;
    };
    j["normalized"] = matrix(r.normalized);
    j["logit_diff"] = matrix(r.logit_diff);
    j["passes_whole_run"] = r.passes_whole;
    j["passes_per_patch"] = r.passes_per_block;
    j["seconds"] = in.seconds;
    return j;
}

}  // namespace attntrace
