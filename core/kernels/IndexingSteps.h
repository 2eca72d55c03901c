// What the planners of the shared indexing functors share (kernels/IndexingPlan.cpp,
// IndexingPlanSignals.cpp, IndexingPlanQuantized.cpp and IndexingPlanAttention.cpp): reading a
// kernel spec's attributes and constant inputs, and the planners of the signal, text, training
// and fallback families that live in the second unit.
#pragma once

#include "kernels/IndexingPlan.h"
#include "kernels/KernelSupport.h"

#include <optional>
#include <string>
#include <vector>

namespace placer::indexing {

using namespace functors;
using Plan = Result<std::vector<IndexingStep>>;

inline SourceError planError(const KernelSpec& spec, const std::string& message) {
    (void)spec;
    return SourceError{"", 0, 0, message};
}

inline const Dims& shapeOf(const KernelSpec& spec, std::size_t input) {
    return spec.inputs[input].shape;
}

inline std::int64_t intAttr(const KernelSpec& spec, const char* name, std::int64_t fallback) {
    return spec.node->attrs.getInt(name, fallback).value_or(fallback);
}

/// A constant input's values as doubles (scales, roi), or nullopt.
inline std::optional<std::vector<double>> constantDoubles(const KernelSpec& spec, int input) {
    if (input < 0 || static_cast<std::size_t>(input) >= spec.constantData.size() ||
        !spec.constantData[static_cast<std::size_t>(input)])
        return std::nullopt;
    const TensorType& type = spec.inputs[static_cast<std::size_t>(input)];
    const auto* data = reinterpret_cast<const std::byte*>(
        spec.constantData[static_cast<std::size_t>(input)]->data());
    std::vector<double> values;
    for (std::int64_t i = 0; i < type.elementCount(); ++i)
        values.push_back(loadAsDouble(data, type.dtype, i));
    return values;
}

inline IndexingStep elements(IndexingFunctor op, std::int64_t count) {
    return IndexingStep{std::move(op), count, false};
}

/// The axis attribute, normalised; -1 when out of range.
inline int axisAttr(const KernelSpec& spec, int rank, std::int64_t fallback) {
    return normalizeAxis(intAttr(spec, "axis", fallback), rank);
}

inline int reductionCode(const std::string& name) {
    if (name == "add")
        return 1;
    if (name == "mul")
        return 2;
    if (name == "max")
        return 3;
    if (name == "min")
        return 4;
    return name == "none" ? 0 : -1;
}

// IndexingPlanSignals.cpp: signal, text and training operators, and the forms of other
// families that run as shared functors.
Plan roiAlign(const KernelSpec& spec);
Plan dft(const KernelSpec& spec);
Plan stft(const KernelSpec& spec);
Plan melWeightMatrix(const KernelSpec& spec);
Plan tfIdf(const KernelSpec& spec);
Plan optimizer(const KernelSpec& spec);
Plan randomDraws(const KernelSpec& spec);
Plan dropout(const KernelSpec& spec);
Plan batchNormTraining(const KernelSpec& spec);
Plan poolAny(const KernelSpec& spec);

// IndexingPlanQuantized.cpp: the quantised operators.
Plan quantize(const KernelSpec& spec);
Plan quantizedMatmul(const KernelSpec& spec);
Plan quantizedConv(const KernelSpec& spec);
Plan blockQuantMatmul(const KernelSpec& spec);

// IndexingPlanAttention.cpp: ONNX Runtime's attention operators for language models.
Plan groupQueryAttention(const KernelSpec& spec);
Plan rotaryEmbedding(const KernelSpec& spec);

} // namespace placer::indexing
