// The HTML report: one self-contained page of a lesson's run (every step with
// its formula and token-labelled matrix, per-head attention heatmaps, a head
// view of the attention as weighted lines, the claims and their verdicts).
// No network: the CSS and JavaScript are inside the page (report_assets/,
// embedded at build time), and a Content-Security-Policy forbids any fetch.
#pragma once

#include "check/check.hpp"
#include "lesson/lesson.hpp"
#include "trace/json_text.hpp"
#include "trace/diff.hpp"
#include "trace/trace_json.hpp"
#include "trace/trace.hpp"

namespace attntrace {

// The page, written to `out` as it is made. The data is write_trace_json's
// text, byte for byte except that every '<' is written \u003c (the same JSON
// value), so no "</script>" or "<!--" can end or bend the script element
// holding it. The page's script draws the sections from that data when opened.
// `extra`: fields added to the page's trace beside the export's (an intervened run's "interventions").
void write_report_html(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport& report,
                       const OrderedJson& extra = OrderedJson::object());

// The page of a trace made elsewhere or earlier: an export (drawn as it is),
// a minimal trace of another implementation (format, version, steps with
// name, shape and values) or an `.npy` folder (`trace` as read_trace_or_npy
// read it; `doc` is then null). What the page needs and such a trace leaves
// out is filled in: each step's axes from the catalogue step of its name (or
// axis0, axis1, ... when no step has that name and rank), numbered labels,
// the source file as the lesson's title, no claims.
void write_trace_report_html(TextSink& out, const TraceData& trace, const nlohmann::json* doc);

// The page of two traces compared (`attntrace report A B`): per step matched
// by name, |A - B| as a heatmap on one scale for the whole page (equal cells,
// cells within the diff's tolerances and cells beyond them drawn apart; each
// cell's verdict written beside its value), the step's verdict, the largest
// difference and where; the first step where B diverges named at the top.
void write_diff_report_html(TextSink& out, const TraceData& a, const TraceData& b, const DiffReport& report);

// The id of the <script type="application/json"> element holding the trace.
inline constexpr const char* kReportDataId = "trace";

// The words the page's pipeline view draws with, taken from the tables that
// declare them (the page's script has none of its own): `boxes`, the last
// part of each step name a catalogue writes -> its box (trace/steps.hpp's
// pipeline_box; a norm's steps are left out: their box is the norm kind's);
// `norms`, each norm kind's spelling -> its display name
// (lesson/config_fields.hpp); `norm_default`, the kind of a trace whose
// config does not write `norm`; `positions`, each positional encoding's
// spelling -> its display name ("RoPE"). Every page holds it, in the element below.
OrderedJson report_vocabulary();
inline constexpr const char* kReportVocabularyId = "vocabulary";

}  // namespace attntrace
