// safetensors files (Hugging Face's checkpoint format), read without copying
// the file: the header is parsed and checked, the data memory-mapped, and a
// tensor converted to float32 only when it is asked for.
//
// Layout of a file: 8 bytes, little-endian, the header's length N; N bytes of
// JSON, an object whose members are tensors
//   "h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [64, 192], "data_offsets": [BEGIN, END]}
// (and "__metadata__", a map of strings we ignore); then the data, the
// offsets counted from its first byte, each tensor row-major and
// little-endian. The tensors cover the data exactly, in order, without holes
// or overlaps.
//
// Every check runs on the header alone, before anything the header sizes is
// allocated or touched: a header that claims terabytes is refused for the
// file it is in, naming the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attntrace {

// A header longer than this is refused before it is read. The format's own
// reference implementation allows 100 MB; a header lists a name, a dtype, a
// shape and two offsets per tensor (~100 bytes), so 16 MiB is ~160,000
// tensors, more than any checkpoint shard holds (GPT-2 small: 14 KiB).
inline constexpr std::size_t kMaxSafetensorsHeaderBytes = std::size_t{16} << 20;

// Values converted to float32 between two drops of the mapped pages they
// were read from (SafetensorsFile::load): the file's pages of at most this
// many values are resident beside the float32 copy, 16 MiB of F32 (8 MiB of
// F16). Converting a tensor whole and dropping its pages after, the copy and
// the file were resident together: a 1 GiB F32 embedding peaked at 2.0 GiB
// (docs/performance.md).
inline constexpr std::size_t kConvertChunkValues = std::size_t{4} << 20;

// The dtypes of the format. Only f32, f16 and bf16 convert to float32; the
// others are recognised so that a file holding them (an integer buffer beside
// the weights) is read, and refused only if such a tensor is asked for.
enum class StDtype : std::uint8_t { f32, f16, bf16, f64, i64, i32, i16, i8, u8, u16, u32, u64, boolean, f8_e4m3, f8_e5m2 };
std::size_t dtype_bytes(StDtype d);
std::string_view dtype_name(StDtype d);  // "F32", as the header spells it

struct StTensor {
    std::string name;
    StDtype dtype = StDtype::f32;
    Shape shape;
    std::size_t begin = 0, end = 0;  // byte range in the data, from its first byte
};

struct StHeader {
    std::size_t data_offset = 0;   // 8 + N: where the data starts in the file
    std::vector<StTensor> tensors;  // by their begin offset
    const StTensor* find(const std::string& name) const;
};

// The header of a file of `file_size` bytes, whose first `size` bytes are
// `bytes` (size >= 8 + N is needed; fewer is a truncated file). Throws
// InputError naming `file`, the tensor and the field, or the byte offset.
StHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size, std::size_t file_size,
                                  const std::string& file);

// The float32 values of one tensor from its little-endian bytes: F32 copied,
// F16 and BF16 widened exactly (every half and bfloat16 value is a float32).
// A dtype other than those is refused naming the file and tensor.
Tensor st_to_float(const StTensor& t, const std::uint8_t* data, const std::string& file);

// One safetensors file, memory-mapped read-only. Unmapped when destroyed.
class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const { return path_; }
    const StHeader& header() const { return header_; }
    // Its float32 values, converted from the mapping now, kConvertChunkValues
    // at a time, each chunk's mapped pages dropped once converted.
    Tensor load(const StTensor& t) const;
    // The tensor's bytes in the mapping, for a product that reads it in place
    // (kernels/matmul.hpp's StoredMatrix) rather than converted.
    const std::uint8_t* bytes(const StTensor& t) const;
    // Refused, as load() refuses it, unless of a float dtype with every value
    // finite: what a tensor read in place is held to before its first use.
    void check_finite(const StTensor& t) const;
    // The mapped pages of values [first, first + count) dropped from the
    // resident set (clean file pages: read again, they fault back in); the
    // last page whole when `last` (the tensor's end).
    void drop_pages(const StTensor& t, std::size_t first, std::size_t count, bool last) const;

private:
    std::string path_;
    StHeader header_;
    const std::uint8_t* map_ = nullptr;
    std::size_t size_ = 0;
};

// A checkpoint's tensors: one model.safetensors, or the shards a
// model.safetensors.index.json names in its weight_map. `get` refuses a
// missing tensor or one of another shape, naming the file and the tensor.
class Checkpoint {
public:
    // DIR/model.safetensors, else DIR/model.safetensors.index.json.
    static Checkpoint open(const std::string& dir);

    bool has(const std::string& name) const;
    // The tensor's float32 values, refused unless its shape is `shape`;
    // `role` says what the model reads it as ("block 0's c_attn weight, d_model x 3·d_model").
    Tensor get(const std::string& name, const Shape& shape, const std::string& role) const;
    // Its entry, refused when missing or not of `shape`: what a model checks
    // of every tensor before it converts any.
    const StTensor& expect(const std::string& name, const Shape& shape, const std::string& role) const;
    const std::string& where() const { return where_; }  // the file or index, for messages
    // The file holding tensor `name` (one `expect` accepted).
    const SafetensorsFile& file_of(const std::string& name) const;

private:
    std::string where_;
    std::vector<std::shared_ptr<SafetensorsFile>> files_;
    std::map<std::string, std::pair<const SafetensorsFile*, const StTensor*>> index_;
};

}  // namespace attntrace
