#include "model/model_lesson.hpp"

#include "model/hf_model.hpp"

namespace attntrace {

Lesson read_any_lesson(const std::string& path) {
    const std::string file = resolve_lesson(path);
    const LessonDocument doc = load_lesson_document(file);
    const std::optional<ModelRef> ref = lesson_model_ref(doc);
    if (!ref) return read_lesson(doc);
    ModelInput in;
    in.text = ref->text;
    in.ids = ref->ids;
    in.text_source = file + ": model.text";
    in.ids_source = file + ": model.ids";
    HfModel m = load_hf_model(ref->dir, in);
    return read_lesson_on_model(doc, std::move(m.lesson));
}

}  // namespace attntrace
