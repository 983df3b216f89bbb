// The HTML report: one self-contained page of a lesson's run (every step with
// its formula and token-labelled matrix, per-head attention heatmaps, a head
// view of the attention as weighted lines, the claims and their verdicts).
// No network: the CSS and JavaScript are inside the page (report_assets/,
// embedded at build time), and a Content-Security-Policy forbids any fetch.
#pragma once

#include "check/check.hpp"
#include "lesson/lesson.hpp"
#include "trace/json_text.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The page, written to `out` as it is made. The data is write_trace_json's
// text, byte for byte except that every '<' is written \u003c (the same JSON
// value), so no "</script>" or "<!--" can end or bend the script element
// holding it. The page's script draws the sections from that data when opened.
void write_report_html(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport& report);

// The id of the <script type="application/json"> element holding the trace.
inline constexpr const char* kReportDataId = "trace";

}  // namespace attntrace
