#include "trace/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attntrace {

namespace {

// An array whose one-line form is at most this wide stays on one line: a
// small matrix reads as a matrix, a long row as a list.
constexpr std::size_t kInlineWidth = 100;

// Text is handed to the sink in chunks of about this size: large enough that
// a file write is cheap, small enough not to matter next to any trace.
constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

// Every tensor value is a float32: its shortest form round-trips. JSON has no
// infinity: -inf (a masked score) is the string "-inf".
void append_number(std::string& s, float x) {
    if (std::isinf(x)) s += x < 0 ? "\"-inf\"" : "\"inf\"";
    else fmt::format_to(std::back_inserter(s), "{}", x);
}

// DEL and the C1 controls in JSON text nlohmann wrote, as \u escapes. That
// text is valid UTF-8 (invalid bytes were replaced), where 0xC2 only starts a
// character: C2 80..C2 9F is always one of U+0080..U+009F, and 0x7F is DEL.
std::string escape_c1_and_del(std::string text) {
    const auto is_c1 = [&](std::size_t i) {
        return static_cast<unsigned char>(text[i]) == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    };
    bool any = false;
    for (std::size_t i = 0; i < text.size() && !any; ++i) any = text[i] == '\x7f' || is_c1(i);
    if (!any) return text;  // the usual case: nothing copied
    std::string out;
    out.reserve(text.size() + 16);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\x7f') {
            out += "\\u007f";
        } else if (is_c1(i)) {
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
            ++i;
        } else {
            out += text[i];
        }
    }
    return out;
}

// A scalar JSON value's text: floats as float32, the rest as nlohmann writes them.
std::string scalar_text(const OrderedJson& j) {
    if (!j.is_number_float()) return dump_terminal_safe(j);
    std::string s;
    append_number(s, static_cast<float>(j.get<double>()));
    return s;
}

OrderedJson json_number(float x) {
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    return static_cast<double>(x);
}

std::size_t elements_after(const Tensor& t, std::size_t axis) {
    std::size_t n = 1;
    for (std::size_t a = axis + 1; a < t.shape.size(); ++a) n *= t.shape[a];
    return n;
}

// Appends the one-line form of t's sub-array at (axis, offset) to s; false
// (s then undefined) when it is wider than kInlineWidth.
bool inline_tensor(const Tensor& t, std::size_t axis, std::size_t offset, std::string& s) {
    const std::size_t start = s.size(), n = t.shape[axis], inner = elements_after(t, axis);
    s += '[';
    for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ", ";
        if (axis + 1 == t.shape.size()) append_number(s, t.data[offset + i]);
        else if (!inline_tensor(t, axis + 1, offset + i * inner, s)) return false;
        if (s.size() - start > kInlineWidth) return false;
    }
    s += ']';
    return true;
}

class Writer {
public:
    Writer(TextSink& sink, const DeferredTensors& deferred) : sink_(sink), deferred_(deferred) {}
    ~Writer() = default;

    void value(const OrderedJson& j, int indent);
    void finish() {
        buf_ += '\n';
        sink_.write(buf_);
        buf_.clear();
    }

private:
    void put(std::string_view s) {
        buf_.append(s);
        if (buf_.size() >= kFlushBytes) {
            sink_.write(buf_);
            buf_.clear();
        }
    }
    void tensor(const Tensor& t, std::size_t axis, std::size_t offset, int indent);
    std::string inline_form(const OrderedJson& j);

    TextSink& sink_;
    const DeferredTensors& deferred_;
    std::string buf_;
};

// The one-line form, or "" when it would hold an object or exceed kInlineWidth.
std::string Writer::inline_form(const OrderedJson& j) {
    std::string out;
    if (j.is_object() || j.is_binary()) return "";
    if (!j.is_array()) return scalar_text(j);
    out = "[";
    for (std::size_t i = 0; i < j.size(); ++i) {
        std::string e = inline_form(j[i]);
        if (e.empty() && !(j[i].is_string() || j[i].is_primitive())) return "";
        out += (i ? ", " : "") + e;
        if (out.size() > kInlineWidth) return "";
    }
    return out + "]";
}

// Written as value() would write tensor_to_json(t), without building it.
void Writer::tensor(const Tensor& t, std::size_t axis, std::size_t offset, int indent) {
    const std::size_t n = t.shape[axis], inner = elements_after(t, axis);
    std::string line;
    if (inline_tensor(t, axis, offset, line)) return put(line);
    if (axis + 1 == t.shape.size()) {  // a long row: still one line
        put("[");
        for (std::size_t i = 0; i < n; ++i) {
            line.clear();
            if (i) line += ", ";
            append_number(line, t.data[offset + i]);
            put(line);
        }
        return put("]");
    }
    const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    const std::string pad_in(static_cast<std::size_t>(indent + 1) * 2, ' ');
    put("[\n");
    for (std::size_t i = 0; i < n; ++i) {
        if (i) put(",\n");
        put(pad_in);
        tensor(t, axis + 1, offset + i * inner, indent + 1);
    }
    put("\n" + pad + "]");
}

void Writer::value(const OrderedJson& j, int indent) {
    const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    const std::string pad_in(static_cast<std::size_t>(indent + 1) * 2, ' ');
    if (j.is_binary()) {
        const DeferredTensor& d = deferred_.at(static_cast<std::size_t>(j.get_binary().subtype()));
        Tensor made;  // a derived step's values, for as long as they are written
        if (!d.held) made = d.make();
        const Tensor& t = d.held ? *d.held : made;
        if (t.shape.empty()) return value(tensor_to_json(t), indent);
        if (t.size() == 0) return put("[]");
        return tensor(t, 0, 0, indent);
    }
    if (j.is_object()) {
        if (j.empty()) return put("{}");
        put("{\n");
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!first) put(",\n");
            first = false;
            put(pad_in + dump_terminal_safe(OrderedJson(it.key())) + ": ");
            value(it.value(), indent + 1);
        }
        return put("\n" + pad + "}");
    }
    if (j.is_array()) {
        std::string one_line = inline_form(j);
        bool flat = std::none_of(j.begin(), j.end(), [](const OrderedJson& e) { return e.is_structured(); });
        if (!one_line.empty()) return put(one_line);
        if (flat) {  // a long flat row: still one line
            put("[");
            for (std::size_t i = 0; i < j.size(); ++i) {
                if (i) put(", ");
                value(j[i], indent + 1);
            }
            return put("]");
        }
        put("[\n");
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (i) put(",\n");
            put(pad_in);
            value(j[i], indent + 1);
        }
        return put("\n" + pad + "]");
    }
    put(scalar_text(j));
}

OrderedJson tensor_rec(const Tensor& t, std::size_t axis, std::size_t offset) {
    OrderedJson arr = OrderedJson::array();
    const std::size_t n = t.shape[axis], inner = elements_after(t, axis);
    for (std::size_t i = 0; i < n; ++i) {
        if (axis + 1 == t.shape.size()) arr.push_back(json_number(t.data[offset + i]));
        else arr.push_back(tensor_rec(t, axis + 1, offset + i * inner));
    }
    return arr;
}

}  // namespace

std::string dump_terminal_safe(const OrderedJson& j, int indent) {
    // replace: a string holding invalid UTF-8 (none that the parser let in) is written, not thrown on.
    return escape_c1_and_del(j.dump(indent, ' ', false, OrderedJson::error_handler_t::replace));
}

OrderedJson deferred_tensor(std::function<Tensor()> make, DeferredTensors& deferred) {
    OrderedJson j = OrderedJson::binary({}, deferred.size());
    deferred.push_back({nullptr, std::move(make)});
    return j;
}

OrderedJson deferred_tensor(const Tensor& t, DeferredTensors& deferred) {
    OrderedJson j = OrderedJson::binary({}, deferred.size());
    deferred.push_back({&t, {}});
    return j;
}

void write_readable(const OrderedJson& j, TextSink& out, const DeferredTensors& deferred) {
    Writer w(out, deferred);
    w.value(j, 0);
    w.finish();
}

std::string dump_readable(const OrderedJson& j) {
    std::string out;
    StringSink sink(out);
    write_readable(j, sink);
    return out;
}

OrderedJson tensor_to_json(const Tensor& t) {
    if (t.shape.empty()) return t.data.empty() ? OrderedJson(nullptr) : json_number(t.data[0]);
    if (t.size() == 0) return OrderedJson::array();
    return tensor_rec(t, 0, 0);
}

}  // namespace attntrace
