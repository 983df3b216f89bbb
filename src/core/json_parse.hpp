// JSON text (RFC 8259) to a document, in one left-to-right pass: what every
// file attntrace reads goes through (lessons, traces, golden files).
//
// Our own reader, not nlohmann's parser: it is the hot path of a large
// lesson (a 40 MB inline X), where nlohmann's character-at-a-time lexer and
// strtod took ~1.4 s of CPU; this one scans runs of plain bytes at once and
// reads numbers with std::from_chars (correctly rounded, as strtod: the same
// doubles, bit for bit). The document is nlohmann's `json`, built as its own
// DOM builder would, with these differences on purpose:
//   - a key that repeats in its object is refused with its field path
//     (nlohmann keeps the last one silently);
//   - the top-level arrays a format bounds (JsonLimits) are refused at the
//     first element too many, before the rest is built;
//   - nesting deeper than kMaxJsonDepth is refused at the bracket that goes too deep;
//   - every error names the byte offset and what was expected there.
#pragma once

#include <string>
#include <string_view>

#include "core/json_field.hpp"

namespace attntrace {

// Throws InputError naming `file`: a syntax error with its byte offset, a
// repeated key or a bound crossed with its field path. Strings must be UTF-8
// (checked as they are read, per Unicode's well-formed byte sequences); a
// leading UTF-8 byte-order mark is skipped.
json parse_json_document(std::string_view text, const std::string& file, JsonLimits limits);

}  // namespace attntrace
