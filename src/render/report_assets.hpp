// The report's stylesheet and script, from src/render/report_assets/ (report.css,
// report.js), compiled in as string literals by cmake/embed_report_assets.cmake.
#pragma once

#include <string_view>

namespace attntrace {

std::string_view report_css();
std::string_view report_js();

}  // namespace attntrace
