// Tensor payloads (io/OnnxImporter.h): a tensor proto's elements from its raw, typed or string
// fields, initializers kept out of the parsed protobuf (viewed where they lie), and external data
// files, mapped once each.
#include "io/OnnxImporter.h"

#include <atomic>
#include <random>

namespace placer {

/// A tensor proto's type and elements, checked against its dims.
Result<HostTensor> OnnxImporter::hostTensor(const onnx::TensorProto& tensor) const {
    std::int64_t count = 0;
    if (auto error = tensorElements(tensor, &count))
        return *error;
    const auto dtype = dtypeFromOnnx(tensor.data_type());
    if (!dtype)
        return fail("tensor '" + tensor.name() + "' has an unsupported element type (" +
                    std::to_string(tensor.data_type()) + ")");
    auto data = tensorData(tensor, *dtype, count);
    if (!data)
        return data.error();
    return HostTensor{TensorType{{tensor.dims().begin(), tensor.dims().end()}, *dtype},
                      data.take()};
}

/// The element count of a tensor's dims, or a failure for negative or absurd sizes.
OnnxImporter::Failure OnnxImporter::tensorElements(const onnx::TensorProto& tensor,
                                                   std::int64_t* count) const {
    *count = 1;
    for (std::int64_t d : tensor.dims()) {
        if (d < 0)
            return fail("tensor '" + tensor.name() + "' has a negative dimension (" +
                        std::to_string(d) + ")");
        if (d != 0 && *count > kMaxElements / d)
            return fail("tensor '" + tensor.name() +
                        "' claims more than 10^12 elements; the file is corrupt");
        *count *= d;
    }
    return std::nullopt;
}

/// Reads external data into the tensors, refusing paths outside the model's folder.
OnnxImporter::Failure OnnxImporter::loadExternalData() {
    const fs::path modelDir = fs::path(m_file).parent_path();
    for (onnx::TensorProto& tensor : *m_model.mutable_graph()->mutable_initializer()) {
        if (tensor.data_location() != onnx::TensorProto_DataLocation_EXTERNAL)
            continue;
        std::string location;
        std::int64_t offset = 0, length = -1;
        for (const auto& entry : tensor.external_data()) {
            if (entry.key() == "location")
                location = entry.value();
            else if (entry.key() == "offset")
                offset = std::strtoll(entry.value().c_str(), nullptr, 10);
            else if (entry.key() == "length")
                length = std::strtoll(entry.value().c_str(), nullptr, 10);
        }
        const std::string what = "initializer '" + tensor.name() + "'";
        if (location.empty())
            return fail(what + " has external data without a location");
        const fs::path relative(location);
        if (relative.is_absolute())
            return fail(what + " points to external data at an absolute path (" + location +
                        "); only files beside the model are read");
        std::error_code ec;
        const fs::path base = fs::weakly_canonical(modelDir.empty() ? fs::path(".") : modelDir, ec);
        const fs::path target = fs::weakly_canonical(base / relative, ec);
        const auto [baseEnd, targetIt] =
            std::mismatch(base.begin(), base.end(), target.begin(), target.end());
        if (ec || baseEnd != base.end())
            return fail(what + " points to external data outside the model's folder (" + location +
                        ")");
        std::int64_t count = 0;
        if (auto error = tensorElements(tensor, &count))
            return error;
        const std::int64_t expected = count * dtypeSize(*dtypeFromOnnx(tensor.data_type()));
        if (length >= 0 && length != expected)
            return fail(what + ": external data length " + std::to_string(length) +
                        " does not match its dims (" + std::to_string(expected) + " bytes)");
        auto file = mappedExternalFile(target);
        if (!file)
            return fail(what + ": cannot open external data file '" + location + "'");
        const auto size = static_cast<std::int64_t>(file->size());
        if (offset < 0 || offset > size || size - offset < expected)
            return fail(what + ": external data file '" + location + "' is too short (" +
                        std::to_string(size) + " bytes, needs " +
                        std::to_string(offset + expected) + ")");
        // Nothing is read now: the constant views the file's mapped pages.
        tensor.set_raw_data(outsideMarker(m_outside.size()));
        m_outside.push_back(TensorData::viewOfFile(file, file->data() + offset,
                                                   static_cast<std::size_t>(expected)));
        tensor.clear_external_data();
        tensor.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
    }
    return std::nullopt;
}

/// The bytes of an initializer without taking them from it (folding reads them again).
Result<TensorData> OnnxImporter::copyOfData(const onnx::TensorProto& tensor) const {
    const auto dtype = dtypeFromOnnx(tensor.data_type());
    std::int64_t count = 0;
    if (!dtype)
        return fail("unsupported element type");
    if (auto error = tensorElements(tensor, &count))
        return *error;
    if (const TensorData* outside = outsideData(tensor)) {
        if (static_cast<std::int64_t>(outside->size()) != count * dtypeSize(*dtype))
            return fail("tensor '" + tensor.name() + "' has the wrong size");
        return *outside;
    }
    if (tensor.has_raw_data()) {
        if (static_cast<std::int64_t>(tensor.raw_data().size()) != count * dtypeSize(*dtype))
            return fail("tensor '" + tensor.name() + "' has the wrong size");
        return TensorData(tensor.raw_data());
    }
    onnx::TensorProto copy = tensor;
    return tensorData(copy, *dtype, count);
}

OnnxImporter::Failure OnnxImporter::addConstant(const std::string& value,
                                                const onnx::TensorProto& tensor,
                                                const std::string& name) {
    std::int64_t count = 0;
    if (auto error = tensorElements(tensor, &count))
        return error;
    const auto dtype = dtypeFromOnnx(tensor.data_type());
    if (!dtype)
        return fail("tensor '" + name + "' has an unsupported element type (" +
                    std::to_string(tensor.data_type()) + ")");
    Node node;
    node.name = uniqueNodeName(name);
    node.op = &OpRegistry::global().constant();
    node.outputs = {TensorType{{tensor.dims().begin(), tensor.dims().end()}, *dtype}};
    auto data = tensorData(tensor, *dtype, count);
    if (!data)
        return data.error();
    node.data = std::make_shared<const TensorData>(data.take());
    define(value, m_graph.addNode(std::move(node)), 0);
    return std::nullopt;
}

/// The tensor's elements as little-endian bytes of `dtype`, from raw or typed fields.
Result<TensorData> OnnxImporter::tensorData(const onnx::TensorProto& tensor, DType dtype,
                                            std::int64_t count) const {
    const std::size_t bytes = static_cast<std::size_t>(count) * dtypeSize(dtype);
    TensorData out;
    auto mismatch = [&](std::size_t stored) {
        return fail("tensor '" + tensor.name() + "' stores " + std::to_string(stored) +
                    " values but its dims need " + std::to_string(count));
    };
    if (const TensorData* outside = outsideData(tensor)) {
        if (outside->size() != bytes)
            return mismatch(outside->size() / std::max(1, dtypeSize(dtype)));
        return *outside; // another view of the same bytes
    }
    if (tensor.has_raw_data() && dtype == DType::String)
        return fail("tensor '" + tensor.name() + "' is of strings but stores raw data; ONNX " +
                    "stores strings in string_data");
    if (tensor.has_raw_data()) {
        if (tensor.raw_data().size() != bytes)
            return mismatch(tensor.raw_data().size() / std::max(1, dtypeSize(dtype)));
        // The reader owns m_model (nothing else sees it, and it is not const): take the
        // bytes over instead of copying hundreds of megabytes of weights.
        out.swap(*const_cast<onnx::TensorProto&>(tensor).mutable_raw_data());
        return out;
    }
    auto copyTyped = [&](const auto& field, auto cast) -> Result<TensorData> {
        if (static_cast<std::int64_t>(field.size()) != count)
            return mismatch(field.size());
        out.resize(bytes);
        for (std::int64_t i = 0; i < count; ++i) {
            const auto value = cast(field.Get(static_cast<int>(i)));
            std::memcpy(out.data() + i * sizeof(value), &value, sizeof(value));
        }
        return out;
    };
    switch (dtype) {
    case DType::Float32:
        return copyTyped(tensor.float_data(), [](float v) { return v; });
    case DType::Float64:
        return copyTyped(tensor.double_data(), [](double v) { return v; });
    case DType::Int64:
        return copyTyped(tensor.int64_data(), [](std::int64_t v) { return v; });
    case DType::Int32:
        return copyTyped(tensor.int32_data(), [](std::int32_t v) { return v; });
    case DType::Int16:
        return copyTyped(tensor.int32_data(),
                         [](std::int32_t v) { return static_cast<std::int16_t>(v); });
    case DType::Float16:
    case DType::BFloat16:
        return copyTyped(tensor.int32_data(),
                         [](std::int32_t v) { return static_cast<std::uint16_t>(v); });
    case DType::Int8:
        return copyTyped(tensor.int32_data(),
                         [](std::int32_t v) { return static_cast<std::int8_t>(v); });
    case DType::UInt8:
    case DType::Bool:
        return copyTyped(tensor.int32_data(),
                         [](std::int32_t v) { return static_cast<std::uint8_t>(v); });
    case DType::UInt16:
        return copyTyped(tensor.int32_data(),
                         [](std::int32_t v) { return static_cast<std::uint16_t>(v); });
    case DType::UInt32:
        return copyTyped(tensor.uint64_data(),
                         [](std::uint64_t v) { return static_cast<std::uint32_t>(v); });
    case DType::UInt64:
        return copyTyped(tensor.uint64_data(), [](std::uint64_t v) { return v; });
    case DType::String:
        return copyTyped(tensor.string_data(),
                         [](const std::string& v) { return internString(v); });
    }
    return out;
}

/// The value of a one-element tensor, if it has one.
std::optional<double> OnnxImporter::scalarOf(const onnx::TensorProto& tensor) const {
    const auto dtype = dtypeFromOnnx(tensor.data_type());
    std::int64_t count = 0;
    if (!dtype || tensorElements(tensor, &count) || count != 1)
        return std::nullopt;
    onnx::TensorProto copy = tensor; // tensorData takes raw bytes out of what it reads
    auto data = tensorData(copy, *dtype, 1);
    if (!data)
        return std::nullopt;
    return decodeScalar(*dtype, data.value());
}

std::uint64_t OnnxImporter::freshNonce() {
    static const std::uint64_t seed = [] {
        std::random_device device;
        return (std::uint64_t{device()} << 32) ^ device();
    }();
    static std::atomic<std::uint64_t> reads{0};
    // splitmix64 of the seed plus the count: distinct for every read, unguessable without the seed.
    std::uint64_t z =
        seed + (reads.fetch_add(1, std::memory_order_relaxed) + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/// What stands in a tensor's raw_data for m_outside[k]: 16 bytes (this read's nonce and k),
/// enough for ONNX's checker, which wants one value field, and unforgeable by a file.
std::string OnnxImporter::outsideMarker(std::size_t k) const {
    std::string marker(16, '\0');
    const std::uint64_t index = k;
    std::memcpy(marker.data(), &m_nonce, 8);
    std::memcpy(marker.data() + 8, &index, 8);
    return marker;
}

/// The bytes a tensor's marker stands for, or null when its raw_data is its own.
const TensorData* OnnxImporter::outsideData(const onnx::TensorProto& tensor) const {
    const std::string& raw = tensor.raw_data();
    if (raw.size() != 16 || std::memcmp(raw.data(), &m_nonce, 8) != 0)
        return nullptr;
    std::uint64_t index = 0;
    std::memcpy(&index, raw.data() + 8, 8);
    return index < m_outside.size() ? &m_outside[static_cast<std::size_t>(index)] : nullptr;
}

std::shared_ptr<const MappedFile> OnnxImporter::mappedExternalFile(const fs::path& path) {
    auto& file = m_externalFiles[path];
    if (!file) {
        auto opened = MappedFile::open(path.string());
        if (!opened)
            return nullptr;
        file = opened.take();
    }
    return file;
}

} // namespace placer
