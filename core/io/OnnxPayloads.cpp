// Finding an ONNX model's large initializer payloads in its serialized bytes, without parsing
// them.
#include "io/OnnxPayloads.h"

#include <cstdint>

namespace placer {
namespace {

// Protobuf's wire format: every field is a varint tag (number << 3 | wire type) followed by a
// varint, 8 bytes, 4 bytes, or a varint length and that many bytes.
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
// onnx.proto field numbers.
constexpr std::uint64_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

struct Field {
    std::uint64_t number = 0;
    int wireType = 0;
    std::string_view whole;   ///< tag and value, as written
    std::string_view payload; ///< a length-delimited field's bytes
};

class Reader {
public:
    explicit Reader(std::string_view bytes) : m_bytes(bytes) {}
    bool done() const { return m_at == m_bytes.size(); }
    std::size_t position() const { return m_at; }

    /// The next field, or false when the bytes are malformed.
    bool next(Field* field) {
        const std::size_t start = m_at;
        std::uint64_t tag = 0;
        if (!varint(&tag))
            return false;
        field->number = tag >> 3;
        field->wireType = static_cast<int>(tag & 7);
        if (field->number == 0)
            return false;
        switch (field->wireType) {
        case kVarint: {
            std::uint64_t ignored = 0;
            if (!varint(&ignored))
                return false;
            break;
        }
        case kFixed64:
        case kFixed32: {
            const std::size_t size = field->wireType == kFixed64 ? 8 : 4;
            if (m_bytes.size() - m_at < size)
                return false;
            m_at += size;
            break;
        }
        case kLengthDelimited: {
            std::uint64_t length = 0;
            if (!varint(&length) || length > m_bytes.size() - m_at)
                return false;
            field->payload = m_bytes.substr(m_at, static_cast<std::size_t>(length));
            m_at += static_cast<std::size_t>(length);
            break;
        }
        default:
            return false; // groups (long deprecated) and invalid types
        }
        field->whole = m_bytes.substr(start, m_at - start);
        return true;
    }

private:
    bool varint(std::uint64_t* value) {
        *value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_at == m_bytes.size())
                return false;
            const auto byte = static_cast<std::uint8_t>(m_bytes[m_at++]);
            *value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
            if (!(byte & 0x80))
                return true;
        }
        return false;
    }

    std::string_view m_bytes;
    std::size_t m_at = 0;
};

void putVarint(std::string* out, std::uint64_t value) {
    while (value >= 0x80) {
        out->push_back(static_cast<char>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out->push_back(static_cast<char>(value));
}

void putBytesField(std::string* out, std::uint64_t number, std::string_view bytes) {
    putVarint(out, number << 3 | kLengthDelimited);
    putVarint(out, bytes.size());
    out->append(bytes);
}

struct Stripper {
    std::string_view model;
    std::size_t threshold;
    const std::function<std::string(std::size_t)>& marker;
    std::vector<PayloadRange>* payloads;

    /// Rewrites the fields of a message, handing each field numbered `number` (length-delimited)
    /// to `inner`, which returns its new payload or nullopt to keep it.
    template <typename Inner>
    std::optional<std::string> rewrite(std::string_view message, std::uint64_t number,
                                       Inner&& inner) {
        std::string out;
        Reader reader(message);
        Field field;
        while (!reader.done()) {
            if (!reader.next(&field))
                return std::nullopt;
            if (field.number == number && field.wireType == kLengthDelimited) {
                std::optional<std::string> changed;
                if (!inner(field.payload, &changed))
                    return std::nullopt;
                if (changed) {
                    putBytesField(&out, number, *changed);
                    continue;
                }
            }
            out.append(field.whole);
        }
        return out;
    }

    std::optional<std::string> tensor(std::string_view message) {
        return rewrite(message, kTensorRawData,
                       [&](std::string_view data, std::optional<std::string>* changed) {
                           if (data.size() < threshold)
                               return true;
                           changed->emplace(marker(payloads->size()));
                           payloads->push_back(PayloadRange{
                               static_cast<std::size_t>(data.data() - model.data()), data.size()});
                           return true;
                       });
    }

    std::optional<std::string> graph(std::string_view message) {
        return rewrite(message, kGraphInitializer,
                       [&](std::string_view bytes, std::optional<std::string>* changed) {
                           auto stripped = tensor(bytes);
                           if (!stripped)
                               return false;
                           changed->emplace(std::move(*stripped));
                           return true;
                       });
    }
};

} // namespace

std::optional<std::string>
stripInitializerPayloads(std::string_view model, std::size_t threshold,
                         const std::function<std::string(std::size_t)>& marker,
                         std::vector<PayloadRange>* payloads) {
    Stripper stripper{model, threshold, marker, payloads};
    payloads->clear();
    auto out = stripper.rewrite(model, kModelGraph,
                                [&](std::string_view bytes, std::optional<std::string>* changed) {
                                    auto stripped = stripper.graph(bytes);
                                    if (!stripped)
                                        return false;
                                    changed->emplace(std::move(*stripped));
                                    return true;
                                });
    if (!out)
        payloads->clear();
    return out;
}

} // namespace placer
