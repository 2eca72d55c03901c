// Reading and writing NumPy .npy files for run inputs and outputs (io/Npy.h).
#include "io/Npy.h"

#include "io/TextFile.h"
#include "ir/StringPool.h"

#include <algorithm>

#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

namespace placer {

namespace {

struct NpyType {
    const char* descr;
    DType dtype;
};

constexpr NpyType kTypes[] = {
    {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<f2", DType::Float16},
    {"|i1", DType::Int8},    {"<i2", DType::Int16},   {"<i4", DType::Int32},
    {"<i8", DType::Int64},   {"|u1", DType::UInt8},   {"|b1", DType::Bool},
    {"<u2", DType::UInt16},  {"<u4", DType::UInt32},  {"<u8", DType::UInt64},
};

/// numpy's fixed-width strings: '<U n' (UTF-32, n code points) or '|S n' (n bytes), NUL-padded.
struct NpyStrings {
    bool unicode = false;
    std::size_t width = 0; ///< characters per element
};

std::optional<NpyStrings> stringDescr(const std::string& descr) {
    if (descr.size() < 3 ||
        !((descr[0] == '<' && descr[1] == 'U') || (descr[0] == '|' && descr[1] == 'S')))
        return std::nullopt;
    std::size_t width = 0;
    const auto [end, ec] = std::from_chars(descr.data() + 2, descr.data() + descr.size(), width);
    if (ec != std::errc() || end != descr.data() + descr.size() || width == 0 || width > (1u << 20))
        return std::nullopt;
    return NpyStrings{descr[1] == 'U', width};
}

void appendUtf8(std::string* out, char32_t c) {
    if (c < 0x80) {
        *out += static_cast<char>(c);
    } else if (c < 0x800) {
        *out += static_cast<char>(0xC0 | (c >> 6));
        *out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *out += static_cast<char>(0xE0 | (c >> 12));
        *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        *out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        *out += static_cast<char>(0xF0 | (c >> 18));
        *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        *out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

/// UTF-8 to code points; a byte that starts no valid sequence stands for itself.
std::u32string decodeUtf8(std::string_view text) {
    std::u32string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        const int length = b < 0x80         ? 1
                           : (b >> 5) == 6  ? 2
                           : (b >> 4) == 14 ? 3
                           : (b >> 3) == 30 ? 4
                                            : 0;
        bool valid = length > 0 && i + static_cast<std::size_t>(length) <= text.size();
        char32_t c = length == 1   ? b
                     : length == 2 ? (b & 0x1F)
                     : length == 3 ? (b & 0x0F)
                                   : (b & 0x07);
        for (int k = 1; valid && k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
            valid = (next >> 6) == 2;
            c = (c << 6) | (next & 0x3F);
        }
        out += valid ? c : static_cast<char32_t>(b);
        i += valid ? static_cast<std::size_t>(length) : 1;
    }
    return out;
}

/// A tiny reader for the header's Python dict literal.
class HeaderParser {
public:
    HeaderParser(std::string_view text, std::string file, std::size_t base)
        : m_text(text), m_file(std::move(file)), m_base(base) {}

    Status parse(std::string* descr, bool* fortran, std::vector<std::int64_t>* shape) {
        bool haveDescr = false, haveOrder = false, haveShape = false;
        skipSpace();
        if (!take('{'))
            return error("the header is not a Python dict");
        for (;;) {
            skipSpace();
            if (take('}'))
                break;
            std::string key;
            if (!readString(&key))
                return error("expected a quoted key");
            skipSpace();
            if (!take(':'))
                return error("expected ':' after '" + key + "'");
            skipSpace();
            if (key == "descr") {
                if (!readString(descr))
                    return error("descr must be a string such as '<f4'");
                haveDescr = true;
            } else if (key == "fortran_order") {
                if (m_text.substr(m_pos, 4) == "True") {
                    *fortran = true;
                    m_pos += 4;
                } else if (m_text.substr(m_pos, 5) == "False") {
                    *fortran = false;
                    m_pos += 5;
                } else {
                    return error("fortran_order must be True or False");
                }
                haveOrder = true;
            } else if (key == "shape") {
                if (!take('('))
                    return error("shape must be a tuple");
                for (;;) {
                    skipSpace();
                    if (take(')'))
                        break;
                    std::int64_t dim = 0;
                    const char* begin = m_text.data() + m_pos;
                    const auto [end, ec] =
                        std::from_chars(begin, m_text.data() + m_text.size(), dim);
                    if (ec != std::errc() || dim < 0)
                        return error("shape entries must be non-negative integers");
                    m_pos += static_cast<std::size_t>(end - begin);
                    shape->push_back(dim);
                    skipSpace();
                    if (take(')'))
                        break;
                    if (!take(','))
                        return error("expected ',' or ')' in shape");
                }
                haveShape = true;
            } else {
                return error("unknown header key '" + key + "'");
            }
            skipSpace();
            if (take('}'))
                break;
            if (!take(','))
                return error("expected ',' or '}' in the header");
        }
        if (!haveDescr || !haveOrder || !haveShape)
            return error("the header lacks descr, fortran_order or shape");
        return {};
    }

private:
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n'))
            ++m_pos;
    }
    bool take(char c) {
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    bool readString(std::string* out) {
        if (m_pos >= m_text.size() || (m_text[m_pos] != '\'' && m_text[m_pos] != '"'))
            return false;
        const char quote = m_text[m_pos++];
        const std::size_t end = m_text.find(quote, m_pos);
        if (end == std::string_view::npos)
            return false;
        *out = std::string(m_text.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return true;
    }
    SourceError error(std::string message) const {
        return SourceError{m_file, 0, 0,
                           "byte " + std::to_string(m_base + m_pos) +
                               " of the .npy header: " + std::move(message)};
    }

    std::string_view m_text;
    std::string m_file;
    std::size_t m_base;
    std::size_t m_pos = 0;
};

} // namespace

Result<HostTensor> parseNpy(std::string_view bytes, const std::string& fileName) {
    auto fail = [&](std::string message) {
        return Result<HostTensor>(SourceError{fileName, 0, 0, std::move(message)});
    };
    if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
        return fail("not a .npy file (it does not start with \\x93NUMPY)");
    const int major = static_cast<unsigned char>(bytes[6]);
    std::size_t headerLength = 0, offset = 0;
    if (major == 1) {
        headerLength = static_cast<unsigned char>(bytes[8]) |
                       (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            return fail("the file ends inside the .npy preamble");
        for (int i = 3; i >= 0; --i)
            headerLength = (headerLength << 8) | static_cast<unsigned char>(bytes[8 + i]);
        offset = 12;
    } else {
        return fail(".npy format version " + std::to_string(major) + " is not supported");
    }
    if (bytes.size() < offset + headerLength)
        return fail("the file ends inside the .npy header");
    std::string descr;
    bool fortran = false;
    std::vector<std::int64_t> shape;
    HeaderParser parser(bytes.substr(offset, headerLength), fileName, offset);
    if (Status status = parser.parse(&descr, &fortran, &shape); !status.ok())
        return status.error();
    if (fortran)
        return fail("Fortran-order arrays are not supported; save with np.ascontiguousarray");
    if (const auto strings = stringDescr(descr)) {
        // Strings become handles into the string pool, NUL padding dropped.
        HostTensor tensor;
        tensor.type = TensorType{shape, DType::String};
        const std::int64_t count = tensor.type.elementCount();
        const std::size_t each = strings->width * (strings->unicode ? 4 : 1);
        const std::size_t dataStart = offset + headerLength;
        const std::size_t stored = bytes.size() - dataStart;
        // Checked by division: a header's shape may claim more strings than any file holds.
        if (count < 0 || stored % each != 0 || static_cast<std::size_t>(count) != stored / each)
            return fail("the data is " + std::to_string(stored) + " bytes, not " +
                        std::to_string(count) + " strings of " + std::to_string(each) +
                        " bytes ('" + descr + "')");
        tensor.data.resize(static_cast<std::size_t>(count) * sizeof(StringHandle));
        for (std::int64_t i = 0; i < count; ++i) {
            const char* at = bytes.data() + dataStart + static_cast<std::size_t>(i) * each;
            std::string text;
            for (std::size_t c = 0; c < strings->width; ++c) {
                char32_t code = 0;
                if (strings->unicode) {
                    for (int b = 3; b >= 0; --b)
                        code = (code << 8) |
                               static_cast<unsigned char>(at[c * 4 + static_cast<std::size_t>(b)]);
                } else {
                    code = static_cast<unsigned char>(at[c]);
                }
                if (code == 0)
                    break;
                if (strings->unicode)
                    appendUtf8(&text, code);
                else
                    text += static_cast<char>(code);
            }
            StringHandle handle = 0;
            try {
                handle = internString(text);
            } catch (const StringPoolFull& full) {
                return SourceError{fileName, 0, 0, full.what()};
            }
            std::memcpy(tensor.data.data() + i * sizeof(handle), &handle, sizeof(handle));
        }
        return tensor;
    }
    const NpyType* type = nullptr;
    for (const NpyType& candidate : kTypes) {
        if (descr == candidate.descr)
            type = &candidate;
    }
    if (!type && descr == "<b1")
        type = &kTypes[8];
    if (!type && descr == "<u1")
        type = &kTypes[7];
    if (!type && descr == "<i1")
        type = &kTypes[3];
    if (!type)
        return fail("element type '" + descr +
                    "' is not supported (float16/32/64, int8/16/32/64, uint8, bool, str)");
    HostTensor tensor;
    tensor.type = TensorType{shape, type->dtype};
    const std::int64_t expected = tensor.type.bytes();
    const std::size_t dataStart = offset + headerLength;
    if (expected == INT64_MAX || static_cast<std::int64_t>(bytes.size() - dataStart) != expected)
        return fail("the data is " + std::to_string(bytes.size() - dataStart) +
                    " bytes but shape " + tensor.type.toShortString() + " needs " +
                    std::to_string(expected));
    tensor.data.resize(static_cast<std::size_t>(expected));
    if (expected > 0)
        std::memcpy(tensor.data.data(), bytes.data() + dataStart,
                    static_cast<std::size_t>(expected));
    return tensor;
}

Result<HostTensor> readNpy(const std::string& path) {
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseNpy(text.value(), path);
}

Result<std::string> formatNpy(const HostTensor& tensor) {
    // Strings as numpy's '<U n', n the longest string's length in code points.
    std::vector<std::u32string> strings;
    std::string stringDescr;
    std::size_t width = 1;
    if (tensor.type.dtype == DType::String) {
        for (std::size_t at = 0; at + sizeof(StringHandle) <= tensor.data.size();
             at += sizeof(StringHandle)) {
            StringHandle handle = 0;
            std::memcpy(&handle, tensor.data.data() + at, sizeof(handle));
            strings.push_back(decodeUtf8(stringOf(handle)));
            width = std::max(width, strings.back().size());
        }
        stringDescr = "<U" + std::to_string(width);
    }
    const char* descr = stringDescr.empty() ? nullptr : stringDescr.c_str();
    for (const NpyType& type : kTypes) {
        if (type.dtype == tensor.type.dtype)
            descr = type.descr;
    }
    if (!descr)
        return SourceError{"", 0, 0,
                           std::string(dtypeName(tensor.type.dtype)) + " has no .npy element type"};
    std::string shape = "(";
    for (std::size_t i = 0; i < tensor.type.shape.size(); ++i)
        shape += std::to_string(tensor.type.shape[i]) + (tensor.type.shape.size() == 1      ? ","
                                                         : i + 1 < tensor.type.shape.size() ? ", "
                                                                                            : "");
    shape += ")";
    std::string header =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Pad so the data starts on a 64-byte boundary; the header ends with a newline.
    const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>((header.size() >> 8) & 0xff);
    out += header;
    if (!strings.empty()) {
        for (const std::u32string& text : strings) {
            for (std::size_t c = 0; c < width; ++c) {
                const char32_t code = c < text.size() ? text[c] : 0;
                for (int b = 0; b < 4; ++b)
                    out += static_cast<char>((code >> (8 * b)) & 0xFF);
            }
        }
        return out;
    }
    out.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
    return out;
}

Status writeNpy(const std::string& path, const HostTensor& tensor) {
    auto bytes = formatNpy(tensor);
    if (!bytes)
        return SourceError{path, 0, 0, bytes.error().message};
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.value().data(), static_cast<std::streamsize>(bytes.value().size()));
    file.close();
    if (!file)
        return SourceError{path, 0, 0, "cannot write the file"};
    return {};
}

} // namespace placer
