#include "render/report.hpp"

#include "export/trace_export.hpp"
#include "render/report_assets.hpp"

namespace attntrace {

namespace {

// Text as HTML element content or a quoted attribute value.
std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

// Passes JSON text on with every '<' as \u003c. In JSON a '<' can only stand
// inside a string, where \u003c is the same character, so the value is
// unchanged; inside the <script> element, "</script>" (which would end it)
// and "<!--" (which changes how the HTML parser reads script text) cannot
// appear. Per character, so a chunk boundary cannot split a pattern.
class ScriptSafeSink final : public TextSink {
public:
    explicit ScriptSafeSink(TextSink& out) : out_(out) {}
    void write(std::string_view text) override {
        std::size_t start = 0;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] != '<') continue;
            out_.write(text.substr(start, i - start));
            out_.write("\\u003c");
            start = i + 1;
        }
        out_.write(text.substr(start));
    }

private:
    TextSink& out_;
};

// default-src 'none': the page may load nothing, from anywhere; only its own
// inline style and script run. A stray URL would be refused by the browser and
// show as a console error (the report test fails on any).
constexpr const char* kContentPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

}  // namespace

void write_report_html(TextSink& out, const Lesson& lesson, const Trace& trace, const CheckReport& report) {
    out.write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.write("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    out.write(kContentPolicy);
    out.write("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    out.write(html_escape("attntrace: " + lesson.title));
    out.write("</title>\n<style>\n");
    out.write(report_css());
    out.write("</style>\n</head>\n<body>\n");
    out.write("<noscript><p>This report draws its steps, heatmaps and claims with JavaScript: "
              "please allow scripts for this file. The data is in the element #trace.</p></noscript>\n");
    out.write("<main id=\"report\"></main>\n<script type=\"application/json\" id=\"");
    out.write(kReportDataId);
    out.write("\">\n");
    ScriptSafeSink data(out);
    write_trace_json(data, lesson, trace, &report);
    out.write("</script>\n<script>\n");
    out.write(report_js());
    out.write("</script>\n</body>\n</html>\n");
}

}  // namespace attntrace
