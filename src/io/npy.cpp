#include "io/npy.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "io/files.hpp"

namespace attntrace {

// The data is copied to and from the float buffer as it is: '<f4' is the
// host's own layout on the little-endian machines attntrace builds for.
static_assert(std::endian::native == std::endian::little, "the .npy reader and writer assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
constexpr std::size_t kAlign = 64;  // numpy pads so the data starts at a multiple of 64 bytes

std::string shape_repr(const Shape& s) {  // Python's tuple: (), (3,), (3, 4)
    if (s.empty()) return "()";
    if (s.size() == 1) return fmt::format("({},)", s[0]);
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
    return out + ")";
}

// The header's dict literal, parsed by hand: numpy writes
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, and any
// other spacing or quoting Python's literal_eval accepts for these keys.
class HeaderParser {
public:
    HeaderParser(const std::string& text, std::size_t base, const std::string& file)
        : t_(text), base_(base), file_(file) {}

    std::string descr;
    bool fortran = false;
    Shape shape;
    std::size_t descr_at = 0, fortran_at = 0, shape_at = 0;  // byte offsets in the file

    void parse() {
        ws();
        expect('{', "'{' (the header is a Python dict)");
        bool seen[3] = {false, false, false};
        for (;;) {
            ws();
            if (peek('}')) break;
            const std::size_t key_at = at();
            const std::string key = string_lit();
            int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
            if (k < 0) fail_at(key_at, "one of the keys 'descr', 'fortran_order', 'shape'", "'" + key + "'");
            if (seen[k]) fail_at(key_at, "each key once", "'" + key + "' a second time");
            seen[k] = true;
            ws();
            expect(':', "':'");
            ws();
            if (k == 0) descr_at = at(), descr = string_lit();
            else if (k == 1) fortran_at = at(), fortran = boolean();
            else shape_at = at(), shape = tuple();
            ws();
            if (peek(',')) ++i_;
            else if (!peek('}')) fail("',' or '}'", found());
        }
        const std::size_t end = at();  // the '}'
        ++i_;
        for (int k = 0; k < 3; ++k)
            if (!seen[k])
                fail_at(end, "the keys 'descr', 'fortran_order' and 'shape'",
                        fmt::format("no '{}'", k == 0 ? "descr" : k == 1 ? "fortran_order" : "shape"));
        for (; i_ < t_.size(); ++i_)
            if (t_[i_] != ' ' && t_[i_] != '\n' && t_[i_] != '\t' && t_[i_] != '\r')
                fail("only spaces and a newline after the dict", found());
    }

private:
    const std::string& t_;
    std::size_t base_;
    const std::string& file_;
    std::size_t i_ = 0;

    std::size_t at() const { return base_ + i_; }
    [[noreturn]] void fail_at(std::size_t offset, const std::string& expected, const std::string& found) const {
        fail_file(file_, fmt::format("byte {}: expected {}, found {}", offset, expected, found));
    }
    [[noreturn]] void fail(const std::string& expected, const std::string& found) const {
        fail_at(at(), expected, found);
    }
    std::string found() const {
        if (i_ >= t_.size()) return "the end of the header";
        std::string s = t_.substr(i_, 12);
        return "\"" + s + (t_.size() - i_ > 12 ? "...\"" : "\"");
    }
    bool peek(char c) const { return i_ < t_.size() && t_[i_] == c; }
    void expect(char c, const char* what) {
        if (!peek(c)) fail(what, found());
        ++i_;
    }
    void ws() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
    }
    std::string string_lit() {
        if (!peek('\'') && !peek('"')) fail("a quoted string", found());
        const char q = t_[i_++];
        const std::size_t start = i_;
        while (i_ < t_.size() && t_[i_] != q) {
            if (t_[i_] == '\\') fail("a string without escapes", found());
            ++i_;
        }
        if (i_ >= t_.size()) fail_at(base_ + start - 1, "a closed string", "one left open");
        return t_.substr(start, i_++ - start);
    }
    bool boolean() {
        if (t_.compare(i_, 4, "True") == 0) return i_ += 4, true;
        if (t_.compare(i_, 5, "False") == 0) return i_ += 5, false;
        fail("True or False", found());
    }
    // (), (3,), (3, 4): sizes from 1 to kMaxElements each.
    Shape tuple() {
        expect('(', "a tuple of sizes such as (3, 4)");
        Shape s;
        for (;;) {
            ws();
            if (peek(')')) break;
            const std::size_t num_at = i_;
            std::size_t v = 0;
            if (i_ >= t_.size() || t_[i_] < '0' || t_[i_] > '9') fail("a size (a whole number) or ')'", found());
            while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') {
                v = v * 10 + static_cast<std::size_t>(t_[i_++] - '0');
                if (v > kMaxElements)
                    fail_at(base_ + num_at, fmt::format("a size of at most {}", kMaxElements), "a larger one");
            }
            if (v == 0) fail_at(base_ + num_at, "a size of at least 1", "0 (an empty array)");
            s.push_back(v);
            ws();
            if (peek(',')) ++i_;
            else if (!peek(')')) fail("',' or ')'", found());
        }
        ++i_;
        return s;
    }
};

std::string cell_index(const Shape& shape, std::size_t flat) {
    std::vector<std::size_t> idx(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        idx[k] = flat % shape[k];
        flat /= shape[k];
    }
    std::string s = "[";
    for (std::size_t k = 0; k < idx.size(); ++k) s += fmt::format("{}{}", k ? "," : "", idx[k]);
    return s + "]";
}

// Words, not digits: a numeric accident printed as "nan" or "-inf" would read like a bug of ours.
std::string describe_value(double x) {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "positive infinity" : "negative infinity";
    return fmt::format("{:g} (beyond float32's range, |x| < 3.4e38)", x);
}

std::string hex_start(const std::string& bytes) {
    std::string s;
    for (std::size_t i = 0; i < bytes.size() && i < kMagicBytes; ++i)
        s += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned char>(bytes[i]));
    return s.empty() ? "an empty file" : "bytes " + s;
}

}  // namespace

std::string npy_bytes(const Tensor& t) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_repr(t.shape) + ", }";
    const std::size_t prefix = kMagicBytes + 2 + 2;  // magic, version, header length (format 1.0)
    const std::size_t pad = (kAlign - (prefix + dict.size() + 1) % kAlign) % kAlign;
    const std::string header = dict + std::string(pad, ' ') + "\n";
    std::string out(kMagic, kMagicBytes);
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    out += header;
    out.append(reinterpret_cast<const char*>(t.ptr()), t.size() * sizeof(float));
    return out;
}

void write_npy(const std::string& path, const Tensor& t) { write_file_atomic(path, npy_bytes(t)); }

Tensor read_npy(const std::string& path, const NpyRead& options) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) fail_file(path, "expected a readable .npy file, found no such file");
    if (!fs::is_regular_file(status)) fail_file(path, "expected a .npy file, found a directory or a special file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) fail_file(path, "expected a readable .npy file, found one whose size cannot be read");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_file(path, "expected a readable .npy file, found one that cannot be opened");
    auto read_exact = [&](std::size_t n) {
        std::string b(n, '\0');
        in.read(b.data(), static_cast<std::streamsize>(n));
        b.resize(static_cast<std::size_t>(in.gcount()));
        return b;
    };
    auto truncated = [&](std::size_t offset, const std::string& what) {
        fail_file(path, fmt::format("byte {}: expected {}, found the end of the file", offset, what));
    };

    // 1. magic and version   (bytes 0..7)
    const std::string lead = read_exact(kMagicBytes + 2);
    if (lead.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
        fail_file(path, fmt::format("byte 0: expected the .npy magic string \\x93NUMPY, found {}",
                                    lead.size() < kMagicBytes && lead.compare(0, lead.size(), kMagic, lead.size()) == 0
                                        ? "the end of the file" : hex_start(lead)));
    if (lead.size() < kMagicBytes + 2) truncated(lead.size(), "the format version");
    const int major = static_cast<unsigned char>(lead[6]), minor = static_cast<unsigned char>(lead[7]);
    if ((major != 1 && major != 2) || minor != 0)
        fail_file(path, fmt::format("byte 6: expected format version 1.0 or 2.0, found {}.{}", major, minor));

    // 2. header length (2 bytes in 1.0, 4 in 2.0, little-endian), then the header
    const std::size_t len_bytes = major == 1 ? 2 : 4;
    const std::string len_text = read_exact(len_bytes);
    if (len_text.size() < len_bytes) truncated(8 + len_text.size(), "the header length");
    std::size_t header_len = 0;
    for (std::size_t k = len_bytes; k-- > 0;) header_len = header_len * 256 + static_cast<unsigned char>(len_text[k]);
    if (header_len > kMaxNpyHeaderBytes)
        fail_file(path, fmt::format("byte 8: expected a header length of at most {}, found {}", kMaxNpyHeaderBytes,
                                    header_len));
    const std::size_t header_at = 8 + len_bytes, data_at = header_at + header_len;
    const std::string header = read_exact(header_len);
    if (header.size() < header_len)
        truncated(header_at + header.size(), fmt::format("a header of {} bytes", header_len));
    HeaderParser h(header, header_at, path);
    h.parse();

    // 3. what the header declares, against the file, before allocating
    std::size_t item = 0;
    if (h.descr == "<f4") item = 4;
    else if (h.descr == "<f8") item = 8;
    else if (h.descr == ">f4" || h.descr == ">f8")
        fail_file(path, fmt::format("byte {}: expected a little-endian dtype ('<f4' or '<f8'), found '{}' (big-endian: "
                                    "save a.astype('<f4'))", h.descr_at, h.descr));
    else
        fail_file(path, fmt::format("byte {}: expected dtype '<f4' or '<f8' (float32 or float64), found '{}'",
                                    h.descr_at, h.descr));
    if (h.fortran)
        fail_file(path, fmt::format("byte {}: expected 'fortran_order': False (C order), found True (save "
                                    "np.ascontiguousarray(a))", h.fortran_at));
    if (h.shape.size() > 3)
        fail_file(path, fmt::format("byte {}: expected a shape of rank 0 to 3, found {}", h.shape_at,
                                    shape_repr(h.shape)));
    std::size_t n = 0;
    if (!checked_numel(h.shape, kMaxElements, n))
        fail_file(path, fmt::format("byte {}: expected at most {} numbers, found the shape {}", h.shape_at,
                                    kMaxElements, shape_repr(h.shape)));
    const std::uintmax_t data_bytes = size >= data_at ? size - data_at : 0;
    if (data_bytes != n * item)
        fail_file(path, fmt::format("byte {}: expected {} bytes of data (shape {}, '{}'), found {}", data_at, n * item,
                                    shape_repr(h.shape), h.descr, data_bytes));
    if (options.before_alloc) options.before_alloc(h.shape, n);

    // 4. the data, converted to float32 and checked cell by cell
    Tensor t = Tensor::uninitialized(h.shape);
    auto refuse = [&](std::size_t flat, double x) {
        fail_file(path, fmt::format("{}: expected a finite number{}, found {}", cell_index(h.shape, flat),
                                    options.allow_neg_inf ? " or negative infinity" : "", describe_value(x)));
    };
    if (item == 4) {
        in.read(reinterpret_cast<char*>(t.ptr()), static_cast<std::streamsize>(n * 4));
        if (static_cast<std::size_t>(in.gcount()) != n * 4) truncated(data_at + in.gcount(), "the data");
    } else {
        constexpr std::size_t kChunk = 8192;  // doubles converted at a time: no n-sized double buffer
        std::vector<double> buf(std::min(n, kChunk));
        for (std::size_t done = 0; done < n;) {
            const std::size_t m = std::min(kChunk, n - done);
            in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(m * 8));
            if (static_cast<std::size_t>(in.gcount()) != m * 8) truncated(data_at + done * 8 + in.gcount(), "the data");
            for (std::size_t k = 0; k < m; ++k) {
                const float f = static_cast<float>(buf[k]);
                if (std::isfinite(buf[k]) && !std::isfinite(f)) refuse(done + k, buf[k]);
                t.data[done + k] = f;
            }
            done += m;
        }
    }
    for (std::size_t k = 0; k < n; ++k) {
        const float x = t.data[k];
        if (!std::isfinite(x) && !(options.allow_neg_inf && x == kNegInf)) refuse(k, x);
    }
    return t;
}

}  // namespace attntrace
