// Where attntrace finds its data (the lessons and their goldens), the same way
// for a build tree, an installed attntrace and a program linking the library:
//   1. the environment variable ($ATTNTRACE_LESSONS, $ATTNTRACE_GOLDEN), when set and not empty;
//   2. <folder of the running executable>/../share/attntrace/<name>, when that
//      folder exists: an installed attntrace (P/bin/attntrace finds
//      P/share/attntrace/lessons), wherever the prefix was moved, with or
//      without the source tree; also a program installed beside it;
//   3. the source tree's folder, compiled in: a build tree.
#pragma once

#include <string>

namespace attntrace {

// The folder of lessons: lessons_dir() = data_dir("ATTNTRACE_LESSONS", "lessons", <source>/lessons).
std::string lessons_dir();
// The folder of golden traces (golden/ID.json for lessons/ID.json).
std::string golden_dir();

// The lookup above for one folder: `env_var`, then share/attntrace/`name`
// beside the executable, then `compiled_in`.
std::string data_dir(const char* env_var, const char* name, const std::string& compiled_in);

// The folder holding the running executable (read from /proc/self/exe; empty
// when it cannot be read).
std::string executable_dir();

}  // namespace attntrace
