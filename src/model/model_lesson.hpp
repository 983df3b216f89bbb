// A lesson file as every command that runs lessons reads it: a lesson of its
// own (lesson/), or a lesson on a checkpoint, whose "model" field names a
// checkpoint folder and the text or ids it reads; the model's lesson is built
// here (load_hf_model) and the file's claims are read against its steps.
#pragma once

#include <string>

#include "lesson/lesson.hpp"

namespace attntrace {

// Reads `path` (a path, or a lesson's name as resolve_lesson takes it). The
// checkpoint's errors name the folder and tensor as `run --model` does; the
// text's or ids' name the lesson file's field ("FILE: model.text").
Lesson read_any_lesson(const std::string& path);

}  // namespace attntrace
