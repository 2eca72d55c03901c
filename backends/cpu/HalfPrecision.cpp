// float16 and bfloat16 on the CPU (backends/cpu/KernelUtil.h viaFloat32): the ops that compute
// (element-wise math, reductions, products, convolutions, pooling, normalisations, softmax) run
// their float32 kernel, oneDNN's where it has one, on their 16-bit operands converted to float32,
// and their 16-bit results converted back, rounded to nearest even. Nothing computes in double,
// as the shared functors did for these types; accumulations are float32's.
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "kernels/KernelSupport.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace placer::cpu {

namespace {

bool isHalf(DType dtype) {
    return dtype == DType::Float16 || dtype == DType::BFloat16;
}

/// The families whose kernels compute on values (not move bytes) and have a float32 kernel.
bool computesInFloat32(KernelFamily family) {
    switch (family) {
    case KernelFamily::Unary:
    case KernelFamily::Binary:
    case KernelFamily::Reduce:
    case KernelFamily::Conv:
    case KernelFamily::ConvTranspose:
    case KernelFamily::Matmul:
    case KernelFamily::Pool:
    case KernelFamily::BatchNorm:
    case KernelFamily::LayerNorm:
    case KernelFamily::InstanceNorm:
    case KernelFamily::Softmax:
    case KernelFamily::Lrn:
    case KernelFamily::Mean:
    case KernelFamily::Resize:
    case KernelFamily::Einsum:
    case KernelFamily::BlockQuantMatmul:
    case KernelFamily::RmsNorm:
    case KernelFamily::GroupQueryAttention:
    case KernelFamily::Rotary:
        return true;
    default:
        return false;
    }
}

void toFloat32(DType dtype, const std::byte* in, float* out, std::int64_t n) {
    if (dtype == DType::Float16)
        vec::halfToFloat(in, out, n);
    else
        vec::bfloat16ToFloat(in, out, n);
}

void fromFloat32(DType dtype, const float* in, std::byte* out, std::int64_t n) {
    if (dtype == DType::Float16)
        vec::floatToHalf(in, out, n);
    else
        vec::floatToBFloat16(in, out, n);
}

class ViaFloat32 final : public Kernel {
public:
    struct Operand {
        std::size_t index = 0;
        DType dtype = DType::Float16;
        std::int64_t count = 0;
        std::vector<float> buffer;
    };

    ViaFloat32(std::unique_ptr<Kernel> inner, std::vector<Operand> inputs,
               std::vector<Operand> outputs, std::size_t inputCount, std::size_t outputCount,
               std::vector<std::shared_ptr<const TensorData>> constants)
        : m_inner(std::move(inner)), m_inputs(std::move(inputs)), m_outputs(std::move(outputs)),
          m_args(inputCount), m_results(outputCount), m_constants(std::move(constants)) {}

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        std::copy(inputs, inputs + m_args.size(), m_args.begin());
        std::copy(outputs, outputs + m_results.size(), m_results.begin());
        for (Operand& operand : m_inputs) {
            toFloat32(operand.dtype, inputs[operand.index], operand.buffer.data(), operand.count);
            m_args[operand.index] = reinterpret_cast<const std::byte*>(operand.buffer.data());
        }
        for (Operand& operand : m_outputs)
            m_results[operand.index] = reinterpret_cast<std::byte*>(operand.buffer.data());
        m_inner->run(m_args.data(), m_results.data());
        for (const Operand& operand : m_outputs)
            fromFloat32(operand.dtype, operand.buffer.data(), outputs[operand.index],
                        operand.count);
    }

    std::string implementation() const override {
        return "float32 of 16 bits:" + m_inner->implementation();
    }

private:
    std::unique_ptr<Kernel> m_inner;
    std::vector<Operand> m_inputs, m_outputs;
    std::vector<const std::byte*> m_args;
    std::vector<std::byte*> m_results;
    std::vector<std::shared_ptr<const TensorData>> m_constants; ///< converted, for the inner's
};

} // namespace

std::optional<Result<std::unique_ptr<Kernel>>>
viaFloat32(const KernelSpec& spec,
           const std::function<Result<std::unique_ptr<Kernel>>(const KernelSpec&)>& make) {
    if (!computesInFloat32(spec.node->op->kernel.family))
        return std::nullopt;
    const auto half = [](const TensorType& type) { return isHalf(type.dtype); };
    if (std::none_of(spec.inputs.begin(), spec.inputs.end(), half) &&
        std::none_of(spec.outputs.begin(), spec.outputs.end(), half))
        return std::nullopt;
    KernelSpec wide = spec;
    // Each 16-bit tensor of `types` made float32 in `widened`, with a buffer for its values.
    const auto widen = [&](const std::vector<TensorType>& types, std::vector<TensorType>& widened) {
        std::vector<ViaFloat32::Operand> operands;
        for (std::size_t k = 0; k < types.size(); ++k) {
            if (!half(types[k]))
                continue;
            const std::int64_t count = types[k].elementCount();
            widened[k].dtype = DType::Float32;
            operands.push_back(
                {k, types[k].dtype, count, std::vector<float>(static_cast<std::size_t>(count))});
        }
        return operands;
    };
    std::vector<ViaFloat32::Operand> inputs = widen(spec.inputs, wide.inputs);
    std::vector<ViaFloat32::Operand> outputs = widen(spec.outputs, wide.outputs);
    // A constant read at load (an exponent, a clip's bounds) is read in float32 too.
    std::vector<std::shared_ptr<const TensorData>> constants;
    for (const ViaFloat32::Operand& input : inputs) {
        const std::size_t i = input.index;
        if (i >= spec.constantData.size() || !spec.constantData[i])
            continue;
        auto converted =
            std::make_shared<TensorData>(static_cast<std::size_t>(input.count) * 4, '\0');
        toFloat32(input.dtype, spec.constantData[i]->raw(),
                  reinterpret_cast<float*>(converted->raw()), input.count);
        wide.constantData[i] = converted.get();
        constants.push_back(std::move(converted));
    }
    auto inner = make(wide);
    if (!inner)
        return std::nullopt; // no float32 kernel for it either: the type's own runs
    return Result<std::unique_ptr<Kernel>>(std::make_unique<ViaFloat32>(
        inner.take(), std::move(inputs), std::move(outputs), spec.inputs.size(),
        spec.outputs.size(), std::move(constants)));
}

} // namespace placer::cpu
