// One function per subcommand; main.cpp only wires them into CLI11.
// Each returns the process exit status: 0 all well, 1 a check failed.
// Bad input throws InputError (exit 2, handled in main).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace attntrace {

inline constexpr const char* kFlagshipLesson = "003-3.1-ring-fell";

void add_run_command(CLI::App& app, int& status);
void add_list_command(CLI::App& app, int& status);
void add_check_command(CLI::App& app, int& status);
void add_export_command(CLI::App& app, int& status);
void add_golden_command(CLI::App& app, int& status);

int run_lesson_command(const std::string& lesson, const std::vector<std::string>& steps, int precision,
                       bool json, bool full);

}  // namespace attntrace
