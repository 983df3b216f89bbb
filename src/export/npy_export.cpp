#include "export/npy_export.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/memory.hpp"
#include "export/trace_export.hpp"  // put_token_sources
#include "io/files.hpp"
#include "io/folder_swap.hpp"
#include "io/npy.hpp"
#include "io/outputs.hpp"

namespace attntrace {

namespace fs = std::filesystem;

namespace {

// A file name the index may give: a plain name ending in .npy, inside the folder.
bool plain_npy_name(const std::string& name) {
    return name.size() > 4 && name.ends_with(".npy") && name.find('/') == std::string::npos && name[0] != '.';
}

std::string file_for(const std::string& step, const char* suffix) {
    std::string name = step + suffix;
    if (!plain_npy_name(name)) fail_file(step, "a step name usable as a file name", "one that is not");
    return name;
}

}  // namespace

bool is_npy_export(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name != kNpyIndexFile && !(plain_npy_name(name) && e.is_regular_file(ec))) return false;
    }
    if (ec) return false;
    try {
        const json doc = load_json_file((fs::path(dir) / kNpyIndexFile).string());
        return doc.is_object() && doc.value("format", json()) == "attntrace-npy";
    } catch (const InputError&) {
        return false;
    }
}

static FolderSwap npy_swap() { return {is_npy_export, "a previous attntrace npy export (index.json and .npy files)"}; }

void check_npy_export_target(const std::string& dir) { check_folder_target(dir, npy_swap()); }

void prepare_npy_export(Outputs& outputs, const std::string& dir, const Lesson& lesson, const Trace& trace) {
    const std::string& temp = outputs.folder(dir, npy_swap()).temp();
    {
        // Written into the temporary folder; an error names the file in `dir`, the folder the user asked for.
        auto save = [&](const std::string& name, const Tensor& t) {
            write_npy((fs::path(temp) / name).string(), t, (fs::path(dir) / name).string());
        };
        OrderedJson index;
        index["format"] = "attntrace-npy";
        index["version"] = kNpyExportVersion;
        index["generator"] = "attntrace " ATTNTRACE_VERSION;
        index["lesson"] = {{"id", lesson.id}, {"title", lesson.title}};
        index["tokens"] = lesson.tokens;
        put_token_sources(index, lesson);
        if (!lesson.query_tokens.empty()) index["query_tokens"] = lesson.query_tokens;
        OrderedJson steps = OrderedJson::array();
        for (const Step& s : trace.steps) {
            OrderedJson sj;
            sj["name"] = s.name;
            const bool has_values = s.recorded == Record::full && s.source != StepSource::not_computable;
            sj["file"] = nullptr;
            if (has_values) {
                sj["file"] = file_for(s.name, ".npy");
                save(sj["file"].get<std::string>(), *values_of(trace, s));  // a derived step's computed now
            }
            sj["shape"] = s.shape;
            sj["axes"] = s.axes;
            sj["labels"] = s.labels;
            sj["source"] = std::string(source_name(s.source));
            sj["recorded"] = std::string(record_name(s.recorded));
            if (has_values && s.formula) {  // a given step: what the formula gave, beside the values used
                sj["formula_file"] = file_for(s.name, ".formula.npy");
                save(sj["formula_file"].get<std::string>(), *s.formula);
            }
            steps.push_back(std::move(sj));
        }
        index["steps"] = std::move(steps);
        write_file_atomic((fs::path(temp) / kNpyIndexFile).string(), dump_readable(index),
                          (fs::path(dir) / kNpyIndexFile).string());
    }
}

void write_npy_export(const std::string& dir, const Lesson& lesson, const Trace& trace) {
    Outputs outputs;
    prepare_npy_export(outputs, dir, lesson, trace);
    outputs.commit();
}

TraceData read_npy_export(const std::string& dir) {
    const std::string index_path = (fs::path(dir) / kNpyIndexFile).string();
    std::error_code ec;
    if (!fs::exists(index_path, ec))
        fail_file(dir, "a trace file, or an npy export folder with an index.json", "a folder without index.json");
    const json doc = load_json_file(index_path);
    Fields f(index_path);
    f.object(doc, "");
    if (f.string(f.member(doc, "", "format"), "format") != "attntrace-npy")
        f.fail("format", "\"attntrace-npy\"", describe(doc["format"]));
    const auto version = f.integer(f.member(doc, "", "version"), "version", 1, 1000000);
    if (version != kNpyExportVersion) f.fail("version", fmt::format("{}", kNpyExportVersion), fmt::format("{}", version));
    TraceData t;
    t.file = dir;
    if (const json* lesson = f.optional(doc, "lesson")) {
        f.object(*lesson, "lesson");
        t.lesson_id = f.string(f.member(*lesson, "lesson", "id"), "lesson.id");
    }
    read_token_sources(f, doc, t);
    const json& steps = f.member(doc, "", "steps");
    if (!steps.is_array()) f.fail("steps", "an array of steps", describe(steps));
    std::map<std::string, std::size_t> seen;
    const std::size_t budget = max_memory_bytes() / sizeof(float);
    std::size_t reserved = 0;  // floats read so far, against --max-memory
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const std::string p = index("steps", i);
        const json& s = f.object(steps[i], p);
        TraceStepData d;
        d.name = f.string(f.member(s, p, "name"), join(p, "name"));
        if (auto [it, fresh] = seen.emplace(d.name, i); !fresh)
            f.fail(join(p, "name"), fmt::format("a name no other step has (this one is {}'s)", index("steps", it->second)),
                   describe(s["name"]));
        const json& shape = f.member(s, p, "shape");
        // As the JSON trace reader: a batched export's steps are rank 4.
        if (!shape.is_array() || shape.size() > kMaxTraceRank)
            f.fail(join(p, "shape"), fmt::format("an array of at most {} sizes", kMaxTraceRank), describe(shape));
        for (std::size_t k = 0; k < shape.size(); ++k)
            d.shape.push_back(static_cast<std::size_t>(f.integer(shape[k], index(join(p, "shape"), k), 1, kMaxElements)));
        d.source = "computed";
        if (const json* src = f.optional(s, "source")) {
            d.source = f.string(*src, join(p, "source"));
            if (d.source != "computed" && d.source != "given" && d.source != "not-computable")
                f.fail(join(p, "source"), "computed, given or not-computable", describe(*src));
        }
        if (const json* rec = f.optional(s, "recorded")) {
            d.recorded = f.string(*rec, join(p, "recorded"));
            if (d.recorded != "full" && d.recorded != "summary")
                f.fail(join(p, "recorded"), "full or summary", describe(*rec));
        }
        const json& file = f.member(s, p, "file");
        if (file.is_null()) {
            if (d.source != "not-computable" && d.recorded != "summary")
                f.fail(join(p, "file"), "the step's .npy file (null only for a step not computable or kept as a summary)",
                       "null");
            t.steps.push_back(std::move(d));
            continue;
        }
        // A step's values (`file`), or what its formula gave beside given values (`formula_file`).
        auto read_file = [&](const json& file, const std::string& field) {
            const std::string name = f.string(file, join(p, field));
            if (!plain_npy_name(name))
                f.fail(join(p, field), "a file name in the folder ending in .npy (no '/', not starting with '.')",
                       describe(file));
            NpyRead options;
            options.allow_neg_inf = true;  // masked cells
            options.max_rank = kMaxTraceRank;
            bool ours = false;  // whether the refusal is before_alloc's, which names the index already
            options.before_alloc = [&](const Shape& got, std::size_t n) {
                ours = true;
                if (got != d.shape)
                    f.fail(join(p, "shape"), fmt::format("the shape of {} ({})", name, shape_str(got)), shape_str(d.shape));
                if (n > budget - reserved)
                    f.fail(join(p, field), fmt::format("steps that fit in {} (--max-memory)", human_bytes(max_memory_bytes())),
                           fmt::format("{} needing {} more", name, human_bytes(n * sizeof(float))));
                reserved += n;
                ours = false;
            };
            try {
                return read_npy((fs::path(dir) / name).string(), options);
            } catch (const InputError& e) {
                if (ours) throw;
                throw e.within(index_path, join(p, field));  // the .npy file's error, inside this step of the index
            }
        };
        d.values = read_file(file, "file");
        if (const json* formula = f.optional(s, "formula_file")) d.formula_values = read_file(*formula, "formula_file");
        t.steps.push_back(std::move(d));
    }
    return t;
}

TraceData read_trace_or_npy(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return read_npy_export(path);
    return read_trace_file(path, TraceRequire::minimal);
}

}  // namespace attntrace
