// Where text goes as it is written: a string, a stream, or a file being
// written whole or not at all (io/files.hpp: AtomicFile). The trace's JSON
// writer (trace/json_text.hpp) writes to one in chunks.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace attntrace {

class TextSink {
public:
    virtual ~TextSink() = default;
    virtual void write(std::string_view text) = 0;
};

class StringSink final : public TextSink {
public:
    explicit StringSink(std::string& out) : out_(out) {}
    void write(std::string_view text) override { out_.append(text); }

private:
    std::string& out_;
};

class StreamSink final : public TextSink {
public:
    explicit StreamSink(std::ostream& out) : out_(out) {}
    void write(std::string_view text) override { out_.write(text.data(), static_cast<std::streamsize>(text.size())); }

private:
    std::ostream& out_;
};

// A std::ostream whose text goes to a TextSink, for a renderer that writes to
// a stream (render_run) held to a sink's limit (check/output_size.hpp:
// BoundedSink). Text is passed on in chunks of kChunk bytes and at flush();
// an exception the sink throws (a refusal) passes through the stream's
// operators to the caller.
class SinkStream final : public std::ostream {
public:
    explicit SinkStream(TextSink& sink) : std::ostream(nullptr), buf_(sink) {
        rdbuf(&buf_);
        exceptions(std::ios::badbit);
    }

private:
    class Buf final : public std::streambuf {
    public:
        explicit Buf(TextSink& sink) : sink_(sink) { setp(chunk_, chunk_ + kChunk); }

    protected:
        int_type overflow(int_type ch) override {
            pass_on();
            if (!traits_type::eq_int_type(ch, traits_type::eof())) sputc(traits_type::to_char_type(ch));
            return traits_type::not_eof(ch);
        }
        int sync() override {
            pass_on();
            return 0;
        }

    private:
        void pass_on() {
            const std::string_view text(pbase(), static_cast<std::size_t>(pptr() - pbase()));
            setp(chunk_, chunk_ + kChunk);
            if (!text.empty()) sink_.write(text);
        }
        // 64 KiB: a few lines of any table at a time, far below what the sinks bound.
        static constexpr std::size_t kChunk = std::size_t{1} << 16;
        TextSink& sink_;
        char chunk_[kChunk];
    };
    Buf buf_;
};

}  // namespace attntrace
