// The process-wide op registry.
#include "ir/OpRegistry.h"

#include <cassert>

namespace placer {

KernelCapability kernelCapability(KernelFamily family) {
    constexpr DTypeMask float32 = dtypeBit(DType::Float32);
    constexpr DTypeMask floats =
        float32 | dtypeBit(DType::Float16) | dtypeBit(DType::BFloat16) | dtypeBit(DType::Float64);
    // Strings (handles into the host's string pool) are moved by the CPU's data movement and
    // read by its Cast and StringNormalizer; a GPU has no string kernel.
    constexpr DTypeMask withStrings = kAllDTypes | kStringDType;
    switch (family) {
    case KernelFamily::None:
        return {};
    // Shape computations read a tensor's type, which lives on the host.
    case KernelFamily::Shape:
        return {withStrings, 0};
    // Outputs whose extent the data decides: computed on the host (a GPU stages the tensors).
    // StringNormalizer is one: its stop words leave as many strings as the data has.
    case KernelFamily::Selection:
        return {withStrings, kAllDTypes};
    // cuDNN and cuBLAS in float32; the CPU has oneDNN for float32 and plain loops for the rest.
    case KernelFamily::Conv:
    case KernelFamily::Matmul:
        return {kAllDTypes, float32};
    // oneDNN and cuDNN (or the element functors) in float32; pooling of other types, and max
    // pooling with indices, by the shared PoolAny functor.
    case KernelFamily::Pool:
        return {kAllDTypes, kAllDTypes};
    // oneDNN and cuDNN in float32; the CPU's float32 kernels take float16 and bfloat16 operands
    // converted (backends/cpu/KernelUtil.h viaFloat32).
    case KernelFamily::BatchNorm:
    case KernelFamily::LayerNorm:
    case KernelFamily::Softmax:
        return {float32 | dtypeBit(DType::Float16) | dtypeBit(DType::BFloat16), float32};
    // Data movement moves bytes, strings' handles included; Cast also converts to and from text.
    case KernelFamily::Copy:
    case KernelFamily::Cast:
    case KernelFamily::Transpose:
    case KernelFamily::Concat:
    case KernelFamily::Split:
    case KernelFamily::Slice:
    case KernelFamily::Gather:
    case KernelFamily::Expand:
    case KernelFamily::Tile:
        return {withStrings, kAllDTypes};
    // Element-wise math and reductions compute in float32 for float32 and in double for every
    // other type (kernels/ElementFunctors.h), on both backends.
    case KernelFamily::Fill:
    case KernelFamily::Unary:
    case KernelFamily::Binary:
    case KernelFamily::Where:
    case KernelFamily::Reduce:
    case KernelFamily::Pad:
    case KernelFamily::Range:
        return {kAllDTypes, kAllDTypes};
    // The indexing and layout functors (kernels/IndexingFunctors.h), the same code on both.
    case KernelFamily::GatherElements:
    case KernelFamily::ScatterElements:
    case KernelFamily::GatherND:
    case KernelFamily::ScatterND:
    case KernelFamily::OneHot:
    case KernelFamily::Trilu:
    case KernelFamily::CumSum:
    case KernelFamily::Hardmax:
    case KernelFamily::SpaceDepth:
    case KernelFamily::Resize:
    case KernelFamily::ConvTranspose:
    case KernelFamily::TopK:
    case KernelFamily::Lrn:
    case KernelFamily::EyeLike:
    case KernelFamily::InstanceNorm:
    case KernelFamily::Quantize:
    case KernelFamily::Mean:
    case KernelFamily::ReverseSequence:
    case KernelFamily::GridSample:
    case KernelFamily::Einsum:
    case KernelFamily::Recurrent:
    case KernelFamily::MaxUnpool:
    case KernelFamily::Det:
    case KernelFamily::QuantizedMatmul:
    case KernelFamily::QuantizedConv:
    case KernelFamily::RoiAlign:
    case KernelFamily::Dft:
    case KernelFamily::Stft:
    case KernelFamily::MelWeightMatrix:
    case KernelFamily::TfIdf:
    case KernelFamily::Optimizer:
    case KernelFamily::Random:
        return {kAllDTypes, kAllDTypes};
    // The shared functor on both (A, the scales and the output in any float type), and the
    // CPU's own kernel for float32 (16-bit operands through it).
    case KernelFamily::BlockQuantMatmul:
    case KernelFamily::RmsNorm:
    case KernelFamily::GroupQueryAttention:
    case KernelFamily::Rotary:
        return {floats, floats};
    }
    return {};
}

bool OpDef::hasAnyKernel() const {
    return hasKernel(DeviceKind::Cpu) || hasKernel(DeviceKind::Cuda) || hasKernel(DeviceKind::VCpu);
}

std::unique_ptr<OpDef> makeUnsupportedOp(std::string name, OpDialect dialect) {
    auto op = std::make_unique<OpDef>();
    op->name = std::move(name);
    op->dialect = dialect;
    op->maxInputs = -1;
    return op; // kernel family None: no device can run it
}

const OpRegistry& OpRegistry::global() {
    static const OpRegistry registry;
    return registry;
}

OpRegistry::OpRegistry() {
    registerBuiltinOps([this](OpDef def) { add(std::move(def)); });
    registerOnnxOps([this](OpDef def) { add(std::move(def)); });
    m_parameter = find("parameter");
    m_constant = find("constant");
    m_deviceCopy = find("device_copy");
    assert(m_parameter && m_constant && m_deviceCopy);
}

const OpDef& OpRegistry::add(OpDef def) {
    assert(!find(def.name) && "op registered twice");
    m_ops.push_back(std::make_unique<OpDef>(std::move(def)));
    m_byName.emplace(m_ops.back()->name, m_ops.back().get());
    return *m_ops.back();
}

const OpDef* OpRegistry::find(std::string_view name) const {
    const auto it = m_byName.find(name);
    return it == m_byName.end() ? nullptr : it->second;
}

std::vector<const OpDef*> OpRegistry::all() const {
    std::vector<const OpDef*> ops;
    ops.reserve(m_ops.size());
    for (const auto& op : m_ops)
        ops.push_back(op.get());
    return ops;
}

} // namespace placer
