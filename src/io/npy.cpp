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
#include "io/npy_header.hpp"

namespace attntrace {

// The data is copied to and from the float buffer as it is: '<f4' is the
// host's own layout on the little-endian machines attntrace builds for.
static_assert(std::endian::native == std::endian::little, "the .npy reader and writer assume a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
constexpr std::size_t kAlign = 64;  // numpy pads so the data starts at a multiple of 64 bytes

// "[2,3]": the row-major index of the flat position, for a value's error.
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
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + npy_shape_repr(t.shape) + ", }";
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

void write_npy(const std::string& path, const Tensor& t, const std::string& shown) {
    write_file_atomic(path, npy_bytes(t), shown);
}

Tensor read_npy(const std::string& path, const NpyRead& options) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) fail_file(path, "a readable .npy file", "no such file");
    if (!fs::is_regular_file(status)) fail_file(path, "a .npy file", "a directory or a special file");
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) fail_file(path, "a readable .npy file", "one whose size cannot be read");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_file(path, "a readable .npy file", "one that cannot be opened");
    auto read_exact = [&](std::size_t n) {
        std::string b(n, '\0');
        in.read(b.data(), static_cast<std::streamsize>(n));
        b.resize(static_cast<std::size_t>(in.gcount()));
        return b;
    };
    auto truncated = [&](std::size_t offset, const std::string& what) {
        fail_at(path, offset, what, "the end of the file");
    };

    // 1. magic and version   (bytes 0..7)
    const std::string lead = read_exact(kMagicBytes + 2);
    if (lead.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
        fail_at(path, 0, "the .npy magic string \\x93NUMPY",
                lead.size() < kMagicBytes && lead.compare(0, lead.size(), kMagic, lead.size()) == 0
                    ? "the end of the file" : hex_start(lead));
    if (lead.size() < kMagicBytes + 2) truncated(lead.size(), "the format version");
    const int major = static_cast<unsigned char>(lead[6]), minor = static_cast<unsigned char>(lead[7]);
    if ((major != 1 && major != 2) || minor != 0)
        fail_at(path, 6, "format version 1.0 or 2.0", fmt::format("{}.{}", major, minor));

    // 2. header length (2 bytes in 1.0, 4 in 2.0, little-endian), then the header
    const std::size_t len_bytes = major == 1 ? 2 : 4;
    const std::string len_text = read_exact(len_bytes);
    if (len_text.size() < len_bytes) truncated(8 + len_text.size(), "the header length");
    std::size_t header_len = 0;
    for (std::size_t k = len_bytes; k-- > 0;) header_len = header_len * 256 + static_cast<unsigned char>(len_text[k]);
    if (header_len > kMaxNpyHeaderBytes)
        fail_at(path, 8, fmt::format("a header length of at most {}", kMaxNpyHeaderBytes), fmt::format("{}", header_len));
    const std::size_t header_at = 8 + len_bytes, data_at = header_at + header_len;
    const std::string header = read_exact(header_len);
    if (header.size() < header_len)
        truncated(header_at + header.size(), fmt::format("a header of {} bytes", header_len));
    const NpyHeader h = parse_npy_header(header, header_at, path);

    // 3. what the header declares, against the file, before allocating
    std::size_t item = 0;
    if (h.descr == "<f4") item = 4;
    else if (h.descr == "<f8") item = 8;
    else if (h.descr == ">f4" || h.descr == ">f8")
        fail_at(path, h.descr_at, "a little-endian dtype ('<f4' or '<f8')",
                fmt::format("'{}' (big-endian: save a.astype('<f4'))", h.descr));
    else
        fail_at(path, h.descr_at, "dtype '<f4' or '<f8' (float32 or float64)", fmt::format("'{}'", h.descr));
    if (h.fortran)
        fail_at(path, h.fortran_at, "'fortran_order': False (C order)", "True (save np.ascontiguousarray(a))");
    if (h.shape.size() > options.max_rank)
        fail_at(path, h.shape_at, fmt::format("a shape of rank 0 to {}", options.max_rank), npy_shape_repr(h.shape));
    std::size_t n = 0;
    if (!checked_numel(h.shape, kMaxElements, n))
        fail_at(path, h.shape_at, fmt::format("at most {} numbers", kMaxElements), "the shape " + npy_shape_repr(h.shape));
    const std::uintmax_t data_bytes = size >= data_at ? size - data_at : 0;
    if (data_bytes != n * item)
        fail_at(path, data_at, fmt::format("{} bytes of data (shape {}, '{}')", n * item, npy_shape_repr(h.shape), h.descr),
                fmt::format("{}", data_bytes));
    if (options.before_alloc) options.before_alloc(h.shape, n);

    // 4. the data, converted to float32 and checked cell by cell
    Tensor t = Tensor::uninitialized(h.shape);
    auto refuse = [&](std::size_t flat, double x) {
        fail_field(path, cell_index(h.shape, flat),
                   options.allow_neg_inf ? "a finite number or negative infinity" : "a finite number", describe_value(x));
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
