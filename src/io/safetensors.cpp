// safetensors: the header checked, the data mapped, tensors converted on demand.
#include "io/safetensors.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/json_field.hpp"
#include "core/memory.hpp"
#include "kernels/matmul.hpp"  // bf16_to_float_ref, half_to_float_ref

namespace attntrace {

namespace {

struct DtypeInfo {
    StDtype dtype;
    const char* name;
    std::size_t bytes;
};
constexpr DtypeInfo kDtypes[] = {
    {StDtype::f32, "F32", 4},      {StDtype::f16, "F16", 2},      {StDtype::bf16, "BF16", 2},
    {StDtype::f64, "F64", 8},      {StDtype::i64, "I64", 8},      {StDtype::i32, "I32", 4},
    {StDtype::i16, "I16", 2},      {StDtype::i8, "I8", 1},        {StDtype::u8, "U8", 1},
    {StDtype::u16, "U16", 2},      {StDtype::u32, "U32", 4},      {StDtype::u64, "U64", 8},
    {StDtype::boolean, "BOOL", 1}, {StDtype::f8_e4m3, "F8_E4M3", 1}, {StDtype::f8_e5m2, "F8_E5M2", 1},
};

// A rank above this is no weight of any model we map (and keeps a shape's product small to check).
constexpr std::int64_t kMaxStRank = 8;
// Offsets and extents as integers: 2^53 keeps them exact as JSON numbers and far above any file.
constexpr std::int64_t kMaxStOffset = std::int64_t{1} << 53;

std::uint64_t le64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

std::string tensor_field(const std::string& name, const char* field) { return join(name, field); }

}  // namespace

std::size_t dtype_bytes(StDtype d) {
    for (const auto& i : kDtypes)
        if (i.dtype == d) return i.bytes;
    return 0;
}

std::string_view dtype_name(StDtype d) {
    for (const auto& i : kDtypes)
        if (i.dtype == d) return i.name;
    return "?";
}

const StTensor* StHeader::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

StHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size, std::size_t file_size,
                                  const std::string& file) {
    if (file_size < 8 || size < 8)
        fail_at(file, 0, "8 bytes of header length (a safetensors file)",
                fmt::format("a file of {} bytes", std::min(size, file_size)));
    const std::uint64_t n = le64(bytes);
    if (n > kMaxSafetensorsHeaderBytes)
        fail_at(file, 0, fmt::format("a header length of at most {} bytes", kMaxSafetensorsHeaderBytes),
                fmt::format("{} bytes", n));
    if (n > file_size - 8)
        fail_at(file, 0, fmt::format("a header length within the file's {} bytes after the length", file_size - 8),
                fmt::format("{} bytes (the file is truncated, or not safetensors)", n));
    if (n > size - 8)
        fail_at(file, size, fmt::format("the {} bytes of the header", n), "the end of what was read");
    // The header's JSON costs about kJsonBytesPerTextByte per byte once parsed.
    if (n > max_memory_bytes() / kJsonBytesPerTextByte)
        fail_at(file, 0, fmt::format("a header whose parse fits in {} (--max-memory)", human_bytes(max_memory_bytes())),
                fmt::format("{} bytes of header", n));
    StHeader h;
    h.data_offset = 8 + static_cast<std::size_t>(n);
    const std::size_t data_size = file_size - h.data_offset;
    json doc;
    try {
        doc = parse_json_text(std::string(reinterpret_cast<const char*>(bytes) + 8, static_cast<std::size_t>(n)), file);
    } catch (const InputError& e) {
        ErrorFields f = e.fields();
        if (f.byte) *f.byte += 8;  // the JSON's offsets from the file's first byte
        throw InputError(std::move(f));
    }
    Fields f(file);
    f.object(doc, "");
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "__metadata__") continue;  // free-form strings: nothing we read
        const std::string& name = it.key();
        const json& v = f.object(it.value(), name);
        f.only_keys(v, name, {"dtype", "shape", "data_offsets"});
        StTensor t;
        t.name = name;
        const std::string dt = f.string(f.member(v, name, "dtype"), tensor_field(name, "dtype"));
        const DtypeInfo* info = nullptr;
        for (const auto& i : kDtypes)
            if (dt == i.name) info = &i;
        if (!info)
            f.fail(tensor_field(name, "dtype"), "a safetensors dtype (F32, F16, BF16, F64, I64, I32, I16, I8, U8, U16, U32, U64, BOOL, F8_E4M3, F8_E5M2)",
                   describe(v["dtype"]));
        t.dtype = info->dtype;
        const json& shape = f.member(v, name, "shape");
        if (!shape.is_array() || static_cast<std::int64_t>(shape.size()) > kMaxStRank)
            f.fail(tensor_field(name, "shape"), fmt::format("an array of at most {} extents", kMaxStRank), describe(shape));
        for (std::size_t i = 0; i < shape.size(); ++i)
            t.shape.push_back(static_cast<std::size_t>(
                f.integer(shape[i], index(tensor_field(name, "shape"), i), 0, kMaxStOffset)));
        const json& off = f.member(v, name, "data_offsets");
        const std::string off_path = tensor_field(name, "data_offsets");
        if (!off.is_array() || off.size() != 2) f.fail(off_path, "[BEGIN, END]", describe(off));
        t.begin = static_cast<std::size_t>(f.integer(off[0], index(off_path, 0), 0, kMaxStOffset));
        t.end = static_cast<std::size_t>(f.integer(off[1], index(off_path, 1), 0, kMaxStOffset));
        if (t.end < t.begin) f.fail(index(off_path, 1), fmt::format("an end at or after the begin ({})", t.begin), fmt::format("{}", t.end));
        if (t.end > data_size)
            f.fail(off_path, fmt::format("a range within the {} bytes of data", data_size),
                   fmt::format("[{}, {}], past the end of the file", t.begin, t.end));
        // The shape's bytes, checked against the range (and without overflow): a
        // shape claiming terabytes cannot match a range within the file.
        std::size_t count = 0;
        const std::size_t range = t.end - t.begin;
        const bool fits = checked_numel(t.shape, range / info->bytes + 1, count);
        if (!fits || count * info->bytes != range)
            f.fail(off_path,
                   fits ? fmt::format("a range of {} bytes ({} values of {}, {} bytes each)", count * info->bytes,
                                      shape_str(t.shape), dt, info->bytes)
                        : fmt::format("a range as long as shape {} of {} needs (more bytes than the file holds)",
                                      shape_str(t.shape), dt),
                   fmt::format("[{}, {}]: {} bytes", t.begin, t.end, range));
        h.tensors.push_back(std::move(t));
    }
    // The tensors tile the data: in order of begin, each starts where the last ended.
    std::sort(h.tensors.begin(), h.tensors.end(), [](const StTensor& a, const StTensor& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::size_t at = 0;
    const StTensor* prev = nullptr;
    for (const auto& t : h.tensors) {
        if (t.begin < at)
            f.fail(tensor_field(t.name, "data_offsets"),
                   fmt::format("a range starting at byte {}, where {} ends", at, prev->name),
                   fmt::format("[{}, {}], overlapping {}", t.begin, t.end, prev->name));
        if (t.begin > at)
            f.fail(tensor_field(t.name, "data_offsets"),
                   fmt::format("a range starting at byte {}, where {}", at, prev ? prev->name + " ends" : "the data starts"),
                   fmt::format("[{}, {}], leaving a hole of {} bytes", t.begin, t.end, t.begin - at));
        at = t.end;
        prev = &t;
    }
    if (at != data_size)
        fail_at(file, h.data_offset + at, fmt::format("the end of the file (the tensors' data ends here)"),
                fmt::format("{} more bytes", data_size - at));
    return h;
}

namespace {

void require_float_dtype(const StTensor& t, const std::string& file) {
    if (t.dtype != StDtype::f32 && t.dtype != StDtype::f16 && t.dtype != StDtype::bf16)
        fail_field(file, tensor_field(t.name, "dtype"), "F32, F16 or BF16 (the dtypes converted to float32)",
                   std::string(dtype_name(t.dtype)));
}

// Values [first, first + n) of t into o[0 .. n): F32 copied, F16 and BF16
// widened (kernels/matmul.hpp), each checked finite (the error names the value's index in t).
void convert_values(const StTensor& t, const std::uint8_t* data, float* o, std::size_t first, std::size_t n,
                    const std::string& file) {
    const std::uint8_t* p = data + t.begin + first * dtype_bytes(t.dtype);
    if (t.dtype == StDtype::f32) {
        if (n) std::memcpy(o, p, n * 4);  // little-endian, as this machine; a tensor of 0 values has no buffer
    } else {
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t v = static_cast<std::uint16_t>(p[2 * i] | (p[2 * i + 1] << 8));
            o[i] = t.dtype == StDtype::f16 ? half_to_float_ref(v) : bf16_to_float_ref(v);
        }
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(o[i]))
            fail_field(file, fmt::format("{}[{}]", t.name, first + i), "a finite number",
                       std::isnan(o[i]) ? std::string("nan") : std::string(o[i] > 0 ? "inf" : "-inf"));
}

}  // namespace

Tensor st_to_float(const StTensor& t, const std::uint8_t* data, const std::string& file) {
    require_float_dtype(t, file);
    Tensor out = Tensor::uninitialized(t.shape.empty() ? Shape{} : t.shape);
    convert_values(t, data, out.ptr(), 0, out.size(), file);
    return out;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
    // O_NONBLOCK: a FIFO in a shard's place is opened at once (a blocking
    // open waits for a writer, forever) and refused by its type below; on a
    // regular file the flag changes nothing, and the file is only mapped.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail_file(path, "a safetensors file", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        std::error_code ec;
        const std::string kind = non_regular_kind(std::filesystem::status(path, ec).type());
        fail_file(path, "a safetensors file (a regular file)", kind.empty() ? "not a regular file" : kind);
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ < 8) {
        ::close(fd);
        fail_at(path, 0, "8 bytes of header length (a safetensors file)", fmt::format("a file of {} bytes", size_));
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);  // the mapping keeps the file
    if (m == MAP_FAILED) fail_file(path, "a safetensors file that can be mapped", std::strerror(errno));
    map_ = static_cast<const std::uint8_t*>(m);
    try {
        header_ = parse_safetensors_header(map_, size_, size_, path);
    } catch (...) {
        ::munmap(const_cast<std::uint8_t*>(map_), size_);
        throw;
    }
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(const_cast<std::uint8_t*>(map_), size_);
}

Tensor SafetensorsFile::load(const StTensor& t) const {
    require_float_dtype(t, path_);
    Tensor out = Tensor::uninitialized(t.shape.empty() ? Shape{} : t.shape);
    const std::uint8_t* data = map_ + header_.data_offset;
    const std::size_t n = out.size();
    // A chunk's mapped pages are not read again once converted: dropped from
    // the resident set (they are the file's, clean; a later read would fault
    // them back in) before the next chunk is read, so that the float32 copy
    // and the file's pages are never resident together beyond one chunk.
    for (std::size_t first = 0; first < n; first += kConvertChunkValues) {
        const std::size_t count = std::min(kConvertChunkValues, n - first);
        convert_values(t, data, out.ptr() + first, first, count, path_);
        drop_pages(t, first, count, first + count == n);
    }
    return out;
}

void SafetensorsFile::drop_pages(const StTensor& t, std::size_t first, std::size_t count, bool last) const {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), bytes = dtype_bytes(t.dtype);
    const std::size_t begin = header_.data_offset + t.begin + first * bytes;
    const std::size_t from = begin / page * page;  // the chunk's first page, shared with what came before
    const std::size_t end = begin + count * bytes;
    // the last page whole only at the tensor's end (the next chunk reads the rest of it);
    // a page shared with the next tensor is dropped too: it is faulted back in when read
    const std::size_t to = last ? (end + page - 1) / page * page : end / page * page;
    if (to > from) ::madvise(const_cast<std::uint8_t*>(map_) + from, std::min(to, size_) - from, MADV_DONTNEED);
}

const std::uint8_t* SafetensorsFile::bytes(const StTensor& t) const { return map_ + header_.data_offset + t.begin; }

namespace {

// True when no value of the n little-endian values at p has every exponent
// bit set (an infinity or a NaN): integer tests the compiler vectorises.
bool exponents_finite(const std::uint8_t* p, StDtype d, std::size_t n) {
    bool special = false;
    if (d == StDtype::f32) {
        for (std::size_t i = 0; i < n; ++i) {
            std::uint32_t v;
            std::memcpy(&v, p + 4 * i, 4);
            special |= (v & 0x7f800000u) == 0x7f800000u;
        }
    } else {
        const std::uint16_t exp = d == StDtype::f16 ? 0x7c00u : 0x7f80u;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t v;
            std::memcpy(&v, p + 2 * i, 2);
            special |= (v & exp) == exp;
        }
    }
    return !special;
}

}  // namespace

void SafetensorsFile::check_finite(const StTensor& t) const {
    require_float_dtype(t, path_);
    const std::size_t n = numel(t.shape);
    if (exponents_finite(bytes(t), t.dtype, n)) return;
    // one is not: found and named as load() names it
    constexpr std::size_t kChunk = 4096;  // values widened at a time, on the stack
    float buffer[kChunk];
    for (std::size_t first = 0; first < n; first += kChunk)
        convert_values(t, map_ + header_.data_offset, buffer, first, std::min(kChunk, n - first), path_);
}

Checkpoint Checkpoint::open(const std::string& dir) {
    namespace fs = std::filesystem;
    Checkpoint c;
    const fs::path single = fs::path(dir) / "model.safetensors";
    const fs::path index = fs::path(dir) / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::exists(single, ec)) {
        c.where_ = single.string();
        c.files_.push_back(std::make_shared<SafetensorsFile>(single.string()));
        for (const auto& t : c.files_[0]->header().tensors) c.index_[t.name] = {c.files_[0].get(), &t};
        return c;
    }
    if (!fs::exists(index, ec))
        fail_file(dir, "model.safetensors or model.safetensors.index.json in the checkpoint folder", "neither");
    c.where_ = index.string();
    const json doc = load_json_file(index.string());
    Fields f(index.string());
    f.object(doc, "");
    const json& map = f.object(f.member(doc, "", "weight_map"), "weight_map");
    std::map<std::string, const SafetensorsFile*> shards;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string path = join("weight_map", it.key());
        const std::string shard = f.string(it.value(), path);
        if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
            f.fail(path, "the name of a shard file in the same folder", describe(it.value()));
        // A JSON string may hold "\u0000", where the name would be cut when the file
        // is opened: "b.safetensors\u0000x" would open b.safetensors, a name the index does not give.
        if (shard.find('\0') != std::string::npos)
            f.fail(path, "the name of a shard file without a NUL byte (a file name ends at one)", describe(it.value()));
        auto s = shards.find(shard);
        if (s == shards.end()) {
            c.files_.push_back(std::make_shared<SafetensorsFile>((fs::path(dir) / shard).string()));
            s = shards.emplace(shard, c.files_.back().get()).first;
        }
        const StTensor* t = s->second->header().find(it.key());
        if (!t) f.fail(path, fmt::format("a tensor that {} holds", shard), "none of that name in it");
        c.index_[it.key()] = {s->second, t};
    }
    return c;
}

bool Checkpoint::has(const std::string& name) const { return index_.count(name) > 0; }

const StTensor& Checkpoint::expect(const std::string& name, const Shape& shape, const std::string& role) const {
    auto it = index_.find(name);
    if (it == index_.end())
        fail_field(where_, name, fmt::format("a tensor \"{}\" ({})", name, role), "none", ErrorKind::missing_field);
    const StTensor& t = *it->second.second;
    if (t.shape != shape)
        fail_field(it->second.first->path(), name, fmt::format("a {} tensor ({})", shape_str(shape), role),
                   fmt::format("a {} tensor", shape_str(t.shape)));
    return t;
}

const SafetensorsFile& Checkpoint::file_of(const std::string& name) const { return *index_.at(name).first; }

Tensor Checkpoint::get(const std::string& name, const Shape& shape, const std::string& role) const {
    const StTensor& t = expect(name, shape, role);
    return index_.at(name).first->load(t);
}

}  // namespace attntrace
