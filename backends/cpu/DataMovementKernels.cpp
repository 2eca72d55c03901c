// The CPU's data movement kernels (backends/cpu/KernelUtil.h): copies, fills, casts (numbers and
// text), transposes and strided views, concatenation and splits, slices, expands and tiles,
// gathers, padding, ranges and shapes, in any element type.
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"

#include "ir/Scalar.h"
#include "ir/StringPool.h"
#include "kernels/OpGeometry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace placer::cpu {

namespace {

using geometry::constantInts;

/// Element i as ONNX casts a number to a string: the shortest text that reads back as the same
/// value of its type ("0.1", not "0.100000001"), "NaN", "INF" and "-INF"; integers exactly.
std::string numberToString(const std::byte* data, DType dtype, std::int64_t i) {
    char text[64];
    std::to_chars_result written{};
    switch (dtype) {
    case DType::Int64: {
        std::int64_t v = 0;
        std::memcpy(&v, data + i * 8, 8);
        written = std::to_chars(text, text + sizeof(text), v);
        break;
    }
    case DType::UInt64: {
        std::uint64_t v = 0;
        std::memcpy(&v, data + i * 8, 8);
        written = std::to_chars(text, text + sizeof(text), v);
        break;
    }
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64: {
        const double v = loadAsDouble(data, dtype, i);
        if (std::isnan(v))
            return "NaN";
        if (std::isinf(v))
            return v > 0 ? "INF" : "-INF";
        written = dtype == DType::Float64
                      ? std::to_chars(text, text + sizeof(text), v)
                      : std::to_chars(text, text + sizeof(text), static_cast<float>(v));
        break;
    }
    default:
        written = std::to_chars(text, text + sizeof(text),
                                static_cast<std::int64_t>(loadAsDouble(data, dtype, i)));
        break;
    }
    return std::string(text, written.ptr);
}

/// A string as ONNX casts it to a number: decimal or scientific text, "NaN", "INF", "-INF" (any
/// case, a "+" allowed, spaces around ignored); text that is no number is NaN, which an integer
/// type stores as 0 (storeFromDouble).
double stringToNumber(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool hasSign = !lower.empty() && (lower[0] == '-' || lower[0] == '+');
    const std::string_view body = std::string_view(lower).substr(hasSign ? 1 : 0);
    const double sign = !lower.empty() && lower[0] == '-' ? -1.0 : 1.0;
    if (body == "inf" || body == "infinity")
        return sign * std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(lower.c_str(), &end);
    if (lower.empty() || body == "nan" || end != lower.c_str() + lower.size())
        return std::numeric_limits<double>::quiet_NaN();
    return v;
}

/// A string that is a whole decimal number, exactly (a double would round past 2^53).
template <typename T> std::optional<T> stringToInteger(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (!text.empty() && text.front() == '+')
        text.remove_prefix(1);
    T value{};
    const auto read = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || read.ec != std::errc() || read.ptr != text.data() + text.size())
        return std::nullopt;
    return value;
}

const Dims& shapeOf(const KernelSpec& spec, int input) {
    return spec.inputs[static_cast<std::size_t>(input)].shape;
}

/// Copies elements of size `E` from a strided view of `src` into contiguous `dst`.
template <std::size_t E>
void gatherStrided(std::byte* dst, const std::byte* src, const Dims& shape, const Dims& strides) {
    forEachRun<1>(shape, {strides},
                  [&](std::int64_t out, const std::array<std::int64_t, 1>& offsets,
                      std::int64_t count, const std::array<std::int64_t, 1>& step) {
                      std::byte* d = dst + out * static_cast<std::int64_t>(E);
                      if (step[0] == 1) {
                          std::memcpy(d, src + offsets[0] * static_cast<std::int64_t>(E),
                                      static_cast<std::size_t>(count) * E);
                          return;
                      }
                      const std::byte* s = src + offsets[0] * static_cast<std::int64_t>(E);
                      for (std::int64_t i = 0; i < count; ++i)
                          std::memcpy(d + i * static_cast<std::int64_t>(E),
                                      s + i * step[0] * static_cast<std::int64_t>(E), E);
                  });
}

using StridedCopy = void (*)(std::byte*, const std::byte*, const Dims&, const Dims&);

StridedCopy stridedCopyFor(int elementSize) {
    switch (elementSize) {
    case 1:
        return gatherStrided<1>;
    case 2:
        return gatherStrided<2>;
    case 4:
        return gatherStrided<4>;
    default:
        return gatherStrided<8>;
    }
}

/// A kernel that writes output 0 as a strided view of input 0 starting at element `base`.
Result<std::unique_ptr<Kernel>> stridedView(std::string name, const KernelSpec& spec,
                                            std::int64_t base, Dims strides) {
    const int size = dtypeSize(spec.outputs[0].dtype);
    const StridedCopy copy = stridedCopyFor(size);
    Dims shape = spec.outputs[0].shape;
    return makeKernel(name, [=](const std::byte* const* in, std::byte* const* out) {
        copy(out[0], in[0] + base * size, shape, strides);
    });
}

} // namespace

// ---- data movement -----------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec) {
    if (auto problem = geometry::checkCopy(spec))
        return specError(spec, *problem);
    const std::int64_t bytes = spec.outputs[0].bytes();
    if (bytes != spec.inputs[0].bytes())
        return specError(spec, "input and output sizes differ");
    const std::size_t extra = spec.outputs.size(); // Dropout's mask output is all true
    std::vector<std::int64_t> maskBytes;
    for (std::size_t k = 1; k < extra; ++k)
        maskBytes.push_back(spec.outputs[k].bytes());
    return makeKernel("plain:copy", [=](const std::byte* const* in, std::byte* const* out) {
        if (out[0] != in[0] && bytes > 0)
            std::memcpy(out[0], in[0], static_cast<std::size_t>(bytes));
        for (std::size_t k = 0; k < maskBytes.size(); ++k)
            std::memset(out[k + 1], 1, static_cast<std::size_t>(maskBytes[k]));
    });
}

Result<std::unique_ptr<Kernel>> fillKernel(const KernelSpec& spec, double value) {
    const TensorType type = spec.outputs[0];
    return makeKernel("plain:fill", [=](const std::byte* const*, std::byte* const* out) {
        const std::int64_t n = type.elementCount();
        if (n == 0)
            return;
        storeFromDouble(out[0], type.dtype, 0, value);
        const int size = dtypeSize(type.dtype);
        for (std::int64_t i = 1; i < n; ++i)
            std::memcpy(out[0] + i * size, out[0], static_cast<std::size_t>(size));
    });
}

Result<std::unique_ptr<Kernel>> castKernel(const KernelSpec& spec) {
    const DType from = spec.inputs[0].dtype, to = spec.outputs[0].dtype;
    const std::int64_t n = spec.outputs[0].elementCount();
    if (from == to)
        return copyKernel(spec);
    if (to == DType::String) {
        return makeKernel(
            "plain:cast to string", [=](const std::byte* const* in, std::byte* const* out) {
                for (std::int64_t i = 0; i < n; ++i) {
                    const StringHandle handle = internString(numberToString(in[0], from, i));
                    std::memcpy(out[0] + i * sizeof(handle), &handle, sizeof(handle));
                }
            });
    }
    if (from == DType::String) {
        return makeKernel("plain:cast from string",
                          [=](const std::byte* const* in, std::byte* const* out) {
                              for (std::int64_t i = 0; i < n; ++i) {
                                  StringHandle handle = 0;
                                  std::memcpy(&handle, in[0] + i * sizeof(handle), sizeof(handle));
                                  const std::string text = stringOf(handle);
                                  if (to == DType::Int64) {
                                      if (const auto exact = stringToInteger<std::int64_t>(text)) {
                                          std::memcpy(out[0] + i * 8, &*exact, 8);
                                          continue;
                                      }
                                  } else if (to == DType::UInt64) {
                                      if (const auto exact = stringToInteger<std::uint64_t>(text)) {
                                          std::memcpy(out[0] + i * 8, &*exact, 8);
                                          continue;
                                      }
                                  }
                                  storeFromDouble(out[0], to, i, stringToNumber(text));
                              }
                          });
    }
    // Between float32 and 16 bits (a precision policy's casts, a 16-bit model's own): the
    // vector conversions, rounded to nearest even as the element-wise path rounds.
    if (from == DType::Float32 && (to == DType::BFloat16 || to == DType::Float16)) {
        return makeKernel("plain:cast from float32",
                          [=](const std::byte* const* in, std::byte* const* out) {
                              const float* source = reinterpret_cast<const float*>(in[0]);
                              if (to == DType::BFloat16)
                                  vec::floatToBFloat16(source, out[0], n);
                              else
                                  vec::floatToHalf(source, out[0], n);
                          });
    }
    if (to == DType::Float32 && (from == DType::BFloat16 || from == DType::Float16)) {
        return makeKernel("plain:cast to float32",
                          [=](const std::byte* const* in, std::byte* const* out) {
                              float* target = reinterpret_cast<float*>(out[0]);
                              if (from == DType::BFloat16)
                                  vec::bfloat16ToFloat(in[0], target, n);
                              else
                                  vec::halfToFloat(in[0], target, n);
                          });
    }
    return makeKernel("plain:cast", [=](const std::byte* const* in, std::byte* const* out) {
        for (std::int64_t i = 0; i < n; ++i)
            storeFromDouble(out[0], to, i, loadAsDouble(in[0], from, i));
    });
}

Result<std::unique_ptr<Kernel>> transposeKernel(const KernelSpec& spec) {
    Dims strides;
    if (auto error = geometry::readTranspose(spec, &strides))
        return specError(spec, *error);
    return stridedView("plain:transpose", spec, 0, strides);
}

Result<std::unique_ptr<Kernel>> concatKernel(const KernelSpec& spec) {
    const Dims& out = spec.outputs[0].shape;
    int axis = 0;
    if (auto problem = geometry::readConcatAxis(spec, &axis))
        return specError(spec, *problem);
    const std::int64_t outer = product(out, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.outputs[0].dtype);
    std::vector<std::int64_t> chunk; // bytes per outer index of each input
    for (const TensorType& input : spec.inputs)
        chunk.push_back(product(input.shape, static_cast<std::size_t>(axis)) * size);
    return makeKernel("plain:concat", [=](const std::byte* const* in, std::byte* const* outp) {
        std::byte* dst = outp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                if (chunk[k] > 0) // a zero-size input may have no memory
                    std::memcpy(dst, in[k] + o * chunk[k], static_cast<std::size_t>(chunk[k]));
                dst += chunk[k];
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> splitKernel(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    int axis = 0;
    if (auto problem = geometry::readSplitAxis(spec, &axis))
        return specError(spec, *problem);
    const std::int64_t outer = product(in, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.inputs[0].dtype);
    std::vector<std::int64_t> chunk;
    for (const TensorType& output : spec.outputs)
        chunk.push_back(product(output.shape, static_cast<std::size_t>(axis)) * size);
    return makeKernel("plain:split", [=](const std::byte* const* inp, std::byte* const* out) {
        const std::byte* src = inp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                if (chunk[k] > 0) // a zero-size output may have no memory
                    std::memcpy(out[k] + o * chunk[k], src, static_cast<std::size_t>(chunk[k]));
                src += chunk[k];
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> sliceKernel(const KernelSpec& spec) {
    std::int64_t base = 0;
    Dims strides;
    if (auto error = geometry::readSlice(spec, &base, &strides))
        return specError(spec, *error);
    return stridedView("plain:slice", spec, base, strides);
}

Result<std::unique_ptr<Kernel>> expandKernel(const KernelSpec& spec) {
    return stridedView("plain:expand", spec, 0,
                       broadcastStrides(spec.inputs[0].shape, spec.outputs[0].shape));
}

Result<std::unique_ptr<Kernel>> tileKernel(const KernelSpec& spec) {
    Dims shape, strides;
    if (auto problem = geometry::readTile(spec, &shape, &strides))
        return specError(spec, *problem);
    const int size = dtypeSize(spec.outputs[0].dtype);
    const StridedCopy copy = stridedCopyFor(size);
    return makeKernel("plain:tile", [=](const std::byte* const* inp, std::byte* const* outp) {
        copy(outp[0], inp[0], shape, strides);
    });
}

Result<std::unique_ptr<Kernel>> gatherKernel(const KernelSpec& spec) {
    const TensorType indices = spec.inputs[1];
    geometry::Gather g;
    if (auto problem = geometry::readGather(spec, &g))
        return specError(spec, *problem);
    const std::int64_t outer = g.outer, dim = g.dim, count = g.count;
    const std::int64_t innerBytes = g.inner * dtypeSize(spec.inputs[0].dtype);
    const geometry::Gather::Mode mode = g.mode;
    const std::string name = spec.node->name;
    return makeKernel("plain:gather", [=](const std::byte* const* in, std::byte* const* out) {
        std::byte* dst = out[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            const std::byte* base = in[0] + o * dim * innerBytes;
            for (std::int64_t i = 0; i < count; ++i) {
                std::int64_t index = readIndex(in[1], indices.dtype, i);
                if (mode == geometry::Gather::Mode::Clip) {
                    index = std::clamp<std::int64_t>(index, 0, dim - 1);
                } else if (mode == geometry::Gather::Mode::Wrap) {
                    index = ((index % dim) + dim) % dim;
                } else {
                    if (index < 0)
                        index += dim;
                    if (index < 0 || index >= dim)
                        throw KernelError("index " +
                                          std::to_string(readIndex(in[1], indices.dtype, i)) +
                                          " is out of range for an axis of length " +
                                          std::to_string(dim) + " in '" + name + "'");
                }
                std::memcpy(dst, base + index * innerBytes, static_cast<std::size_t>(innerBytes));
                dst += innerBytes;
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> padKernel(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    const std::size_t rank = in.size();
    Dims before;
    std::string mode;
    if (auto error = geometry::readPad(spec, &before, &mode))
        return specError(spec, *error);
    // For each output dimension: the input index each output index reads, or -1 for the value.
    std::vector<Dims> source(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        for (std::int64_t o = 0; o < out[d]; ++o) {
            std::int64_t i = o - before[d];
            if (i < 0 || i >= in[d]) {
                if (mode == "constant" || in[d] == 0) {
                    i = -1;
                } else if (mode == "edge") {
                    i = std::clamp<std::int64_t>(i, 0, in[d] - 1);
                } else {
                    const std::int64_t period = 2 * (in[d] - 1);
                    i = period == 0 ? 0 : ((i % period) + period) % period;
                    if (i >= in[d])
                        i = period - i;
                }
            }
            source[d].push_back(i);
        }
    }
    const DType dtype = spec.outputs[0].dtype;
    const int size = dtypeSize(dtype);
    const Dims own = contiguousStrides(in);
    const int valueInput = geometry::inputAt(spec, 2);
    const bool hasValue =
        valueInput >= 0 && spec.inputs[static_cast<std::size_t>(valueInput)].elementCount() == 1;
    const double attrValue = spec.node->attrs.getFloat("value", 0).value_or(0);
    const DType valueType =
        hasValue ? spec.inputs[static_cast<std::size_t>(valueInput)].dtype : dtype;
    // The last dimension as runs: consecutive output elements that read consecutive input
    // elements (one copy), or the value (one fill).
    struct Run {
        std::int64_t at, count, from; ///< from -1: the value
    };
    std::vector<Run> runs;
    const std::int64_t inner = rank == 0 ? 1 : out[rank - 1];
    for (std::int64_t o = 0; o < inner; ++o) {
        const std::int64_t i = rank == 0 ? 0 : source[rank - 1][static_cast<std::size_t>(o)];
        if (!runs.empty()) {
            Run& last = runs.back();
            const bool extends =
                i < 0 ? last.from < 0 : last.from >= 0 && i == last.from + last.count;
            if (extends) {
                ++last.count;
                continue;
            }
        }
        runs.push_back({o, 1, i});
    }
    const std::int64_t rows = inner == 0 ? 0 : product(out) / inner;
    return makeKernel("plain:pad", [=](const std::byte* const* inp, std::byte* const* outp) {
        const double value = hasValue ? loadAsDouble(inp[valueInput], valueType, 0) : attrValue;
        // One row of the value, the source of every fill.
        std::vector<std::byte> fill(static_cast<std::size_t>(inner * size));
        for (std::int64_t o = 0; o < inner; ++o)
            storeFromDouble(fill.data(), dtype, o, value);
        Dims index(rank, 0);
        for (std::int64_t row = 0; row < rows; ++row) {
            std::int64_t src = 0;
            bool outside = false;
            for (std::size_t d = 0; d + 1 < rank; ++d) {
                const std::int64_t i = source[d][static_cast<std::size_t>(index[d])];
                outside = outside || i < 0;
                src += i * own[d];
            }
            std::byte* y = outp[0] + row * inner * size;
            for (const Run& run : runs) {
                const bool fromValue = outside || run.from < 0;
                const std::byte* from = fromValue ? fill.data() : inp[0] + (src + run.from) * size;
                std::memcpy(y + run.at * size, from, static_cast<std::size_t>(run.count * size));
            }
            for (std::size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
                if (++index[d] < out[d])
                    break;
                index[d] = 0;
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> rangeKernel(const KernelSpec& spec) {
    const TensorType out = spec.outputs[0];
    const DType startType = spec.inputs[0].dtype, deltaType = spec.inputs[2].dtype;
    return makeKernel("plain:range", [=](const std::byte* const* in, std::byte* const* outp) {
        const double start = loadAsDouble(in[0], startType, 0);
        const double delta = loadAsDouble(in[2], deltaType, 0);
        for (std::int64_t i = 0; i < out.elementCount(); ++i)
            storeFromDouble(outp[0], out.dtype, i, start + static_cast<double>(i) * delta);
    });
}

Result<std::unique_ptr<Kernel>> shapeKernel(const KernelSpec& spec) {
    const std::string& op = spec.node->op->name;
    const TensorType out = spec.outputs[0];
    Dims values;
    if (op == "Size") {
        values.push_back(spec.inputs[0].elementCount());
    } else {
        const Dims& in = shapeOf(spec, 0);
        const auto rank = static_cast<std::int64_t>(in.size());
        std::int64_t start = spec.node->attrs.getInt("start", 0).value_or(0);
        std::int64_t end = spec.node->attrs.getInt("end", rank).value_or(rank);
        start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
        for (std::int64_t d = start; d < end; ++d)
            values.push_back(in[static_cast<std::size_t>(d)]);
    }
    if (static_cast<std::int64_t>(values.size()) != out.elementCount())
        return specError(spec, "the output type does not match the input's rank");
    return makeKernel("plain:shape", [=](const std::byte* const*, std::byte* const* outp) {
        for (std::size_t i = 0; i < values.size(); ++i)
            storeFromDouble(outp[0], out.dtype, static_cast<std::int64_t>(i),
                            static_cast<double>(values[i]));
    });
}

} // namespace placer::cpu
