// The signal, text and training operators (kernels/SignalFunctors.h, TrainingFunctors.h) and
// the forms of other families that run as shared functors (random draws, dropout, training
// batch normalisation, pooling of other types or with indices), planned as IndexingPlan.cpp
// plans the rest.
#include "kernels/IndexingSteps.h"

#include "kernels/OpGeometry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace placer::indexing {

namespace {

double floatAttr(const KernelSpec& spec, const char* name, double fallback) {
    return spec.node->attrs.getFloat(name, fallback).value_or(fallback);
}

std::string stringAttr(const KernelSpec& spec, const char* name, const char* fallback) {
    return spec.node->attrs.getString(name, fallback).value_or(fallback);
}

std::vector<double> floatsAttr(const KernelSpec& spec, const char* name) {
    const AttrValue* a = spec.node->attrs.find(name);
    if (a && std::holds_alternative<std::vector<double>>(*a))
        return std::get<std::vector<double>>(*a);
    if (a && std::holds_alternative<double>(*a))
        return {std::get<double>(*a)};
    return {};
}

/// A scalar integer input known when planning (a constant, or a value given for it), or null.
std::optional<std::int64_t> knownScalar(const KernelSpec& spec, int position) {
    const int input = geometry::inputAt(spec, position);
    if (input < 0)
        return std::nullopt;
    const auto values = geometry::constantInts(spec, static_cast<std::size_t>(input));
    if (!values || values->size() != 1)
        return std::nullopt;
    return values->front();
}

} // namespace

Plan roiAlign(const KernelSpec& spec) {
    if (spec.inputs.size() < 3 || shapeOf(spec, 0).size() != 4)
        return planError(spec, "needs a 4-d input, regions and their batch indices");
    const Dims& x = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    if (out.size() != 4 || shapeOf(spec, 1).size() != 2 || shapeOf(spec, 1)[1] != 4)
        return planError(spec, "the regions must be [count, 4]");
    RoiAlign op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.roiElem = elemOf(spec.inputs[1].dtype);
    op.batchElem = elemOf(spec.inputs[2].dtype);
    op.channels = x[1];
    op.height = x[2];
    op.width = x[3];
    op.outHeight = out[2];
    op.outWidth = out[3];
    op.samplingRatio = intAttr(spec, "sampling_ratio", 0);
    op.spatialScale = floatAttr(spec, "spatial_scale", 1.0);
    const std::string mode = stringAttr(spec, "mode", "avg");
    if (mode != "avg" && mode != "max")
        return planError(spec, "mode '" + mode + "' is not avg or max");
    op.isMax = mode == "max";
    // Opset 16 added the attribute; before it, regions were read as output_half_pixel.
    const std::string transform = stringAttr(
        spec, "coordinate_transformation_mode",
        spec.onnxOpset >= 16 || spec.onnxOpset == 0 ? "half_pixel" : "output_half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel")
        return planError(spec, "coordinate_transformation_mode '" + transform + "' is not known");
    op.halfPixel = transform == "half_pixel";
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan dft(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    const int rank = static_cast<int>(in.size());
    if (rank < 2 || (in.back() != 1 && in.back() != 2) || out.size() != in.size() ||
        out.back() != 2)
        return planError(spec, "the signal must end in a dimension of 1 (real) or 2 (complex)");
    const int axis = normalizeAxis(intAttr(spec, "axis", 1), rank);
    if (axis < 0 || axis == rank - 1)
        return planError(spec, "the axis is out of range or the real/imaginary dimension");
    const auto a = static_cast<std::size_t>(axis);
    Dft op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.outer = product(in, 0, a);
    op.inner = product(in, a + 1, in.size() - 1);
    op.length = in[a];
    op.bins = out[a];
    op.parts = static_cast<int>(in.back());
    op.inverse = intAttr(spec, "inverse", 0) != 0;
    const bool onesided = intAttr(spec, "onesided", 0) != 0;
    op.size = op.length;
    if (geometry::inputAt(spec, 1) >= 0) {
        const auto length = knownScalar(spec, 1);
        if (!length || *length <= 0)
            return planError(spec, "dft_length must be a positive value known when planning "
                                   "(it sets the output's shape)");
        op.size = *length;
    } else if (!onesided) {
        op.size = op.bins;
    }
    if (op.bins != (onesided ? op.size / 2 + 1 : op.size))
        return planError(spec, "the output's length along the axis does not match the transform");
    return std::vector{elements(op, op.outer * op.bins * op.inner)};
}

Plan stft(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    if (in.size() != 3 || (in[2] != 1 && in[2] != 2) || out.size() != 4 || out[3] != 2)
        return planError(spec, "the signal must be [batch, length, 1 or 2]");
    Stft op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.length = in[1];
    op.parts = static_cast<int>(in[2]);
    op.frames = out[1];
    op.bins = out[2];
    const auto step = knownScalar(spec, 1);
    if (!step || *step <= 0)
        return planError(spec, "frame_step must be a positive value known when planning");
    op.step = *step;
    op.window = geometry::inputAt(spec, 2);
    if (op.window >= 0) {
        op.windowElem = elemOf(spec.inputs[static_cast<std::size_t>(op.window)].dtype);
        op.frameLength = spec.inputs[static_cast<std::size_t>(op.window)].elementCount();
    }
    if (geometry::inputAt(spec, 3) >= 0) {
        const auto length = knownScalar(spec, 3);
        if (!length || *length <= 0)
            return planError(spec, "frame_length must be a positive value known when planning");
        op.frameLength = *length;
    } else if (op.window < 0) {
        return planError(spec, "needs a window or a frame_length");
    }
    return std::vector{elements(op, spec.outputs[0].elementCount() / 2)};
}

Plan melWeightMatrix(const KernelSpec& spec) {
    const Dims& out = spec.outputs[0].shape;
    if (spec.inputs.size() < 5 || out.size() != 2)
        return planError(spec, "needs the bin count, DFT length, sample rate and edge "
                               "frequencies");
    MelWeightMatrix op;
    for (std::size_t k = 0; k < 5; ++k)
        op.elem[k] = elemOf(spec.inputs[k].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.rows = out[0];
    op.melBins = out[1];
    ZeroOutput zero;
    zero.elem = op.outElem;
    return std::vector{elements(zero, spec.outputs[0].elementCount()), elements(op, op.melBins)};
}

Plan tfIdf(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    if (in.empty() || in.size() > 2 || out.size() != in.size())
        return planError(spec, "the input must be [length] or [rows, length]");
    if (spec.node->attrs.has("pool_strings"))
        return planError(spec, "string pools are not supported (no string tensors)");
    TfIdf op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.rows = in.size() == 2 ? in[0] : 1;
    op.length = in.back();
    op.width = out.back();
    op.minGram = static_cast<int>(intAttr(spec, "min_gram_length", 1));
    op.maxGram = static_cast<int>(intAttr(spec, "max_gram_length", 1));
    op.maxSkip = static_cast<int>(intAttr(spec, "max_skip_count", 0));
    const std::string mode = stringAttr(spec, "mode", "TF");
    op.mode = mode == "TF" ? TfIdf::Tf : mode == "IDF" ? TfIdf::Idf : TfIdf::TfTimesIdf;
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
        return planError(spec, "mode '" + mode + "' is not TF, IDF or TFIDF");
    const Dims pool = spec.node->attrs.getInts("pool_int64s", {}).value_or(Dims{});
    const Dims counts = spec.node->attrs.getInts("ngram_counts", {}).value_or(Dims{});
    const Dims indexes = spec.node->attrs.getInts("ngram_indexes", {}).value_or(Dims{});
    const std::vector<double> weights = floatsAttr(spec, "weights");
    if (op.minGram < 1 || op.maxGram < op.minGram || op.maxSkip < 0)
        return planError(spec, "the n-gram lengths or the skip count are out of range");
    if (op.maxGram > TfIdf::kMaxGram || counts.size() > static_cast<std::size_t>(TfIdf::kMaxGram))
        return planError(spec, "n-grams longer than 8 are not supported");
    if (pool.size() > static_cast<std::size_t>(TfIdf::kMaxPool) ||
        indexes.size() > static_cast<std::size_t>(TfIdf::kMaxNgrams))
        return planError(spec, "pools of more than 256 items or n-grams are not supported");
    for (std::size_t k = 0; k < pool.size(); ++k)
        op.pool[k] = pool[k];
    int ordinal = 0;
    for (std::size_t g = 0; g < counts.size(); ++g) {
        const int n = static_cast<int>(g) + 1;
        const std::int64_t begin = counts[g];
        const std::int64_t end =
            g + 1 < counts.size() ? counts[g + 1] : static_cast<std::int64_t>(pool.size());
        if (begin < 0 || end < begin || end > static_cast<std::int64_t>(pool.size()) ||
            (end - begin) % n != 0)
            return planError(spec, "ngram_counts does not divide the pool into n-grams");
        op.groupStart[n] = static_cast<int>(begin);
        op.groupEnd[n] = static_cast<int>(end);
        op.firstNgram[n] = ordinal;
        ordinal += static_cast<int>((end - begin) / n);
    }
    if (static_cast<std::size_t>(ordinal) != indexes.size())
        return planError(spec, "ngram_indexes must give one output column per n-gram of the pool");
    if (!weights.empty() && weights.size() != indexes.size())
        return planError(spec, "weights must give one weight per n-gram of the pool");
    op.ngrams = ordinal;
    for (int k = 0; k < ordinal; ++k) {
        const std::int64_t column = indexes[static_cast<std::size_t>(k)];
        if (column < 0 || column >= op.width)
            return planError(spec, "an n-gram's output column is outside the output");
        op.column[k] = static_cast<int>(column);
        op.weight[k] =
            weights.empty() ? 1.0f : static_cast<float>(weights[static_cast<std::size_t>(k)]);
    }
    op.weighted = !weights.empty();
    return std::vector{IndexingStep{op, op.rows, false}};
}

Plan optimizer(const KernelSpec& spec) {
    const std::string& name = spec.node->op->name;
    const bool adam = name == "Adam", adagrad = name == "Adagrad";
    const std::size_t perTensor = adam ? 4 : 3;
    if (spec.inputs.size() < 2 + perTensor || (spec.inputs.size() - 2) % perTensor != 0)
        return planError(spec, "needs R, T and, for each tensor, X, G and the optimiser's state");
    if (spec.inputs.size() > static_cast<std::size_t>(Io::kMaxInputs) ||
        spec.outputs.size() > static_cast<std::size_t>(Io::kMaxOutputs))
        return planError(spec, "updates of more than " +
                                   std::to_string((Io::kMaxInputs - 2) / perTensor) +
                                   " tensors in one node are not supported");
    const int n = static_cast<int>((spec.inputs.size() - 2) / perTensor);
    if (spec.outputs.size() != static_cast<std::size_t>(n) * (perTensor - 1))
        return planError(spec, "needs an output for each updated tensor and state");
    Optimizer base;
    base.rElem = elemOf(spec.inputs[0].dtype);
    base.tElem = elemOf(spec.inputs[1].dtype);
    base.norm = floatAttr(spec, "norm_coefficient", 0);
    if (adagrad) {
        base.kind = Optimizer::Adagrad;
        base.decay = floatAttr(spec, "decay_factor", 0);
        base.epsilon = floatAttr(spec, "epsilon", 1e-6);
    } else if (adam) {
        base.kind = Optimizer::Adam;
        base.alpha = floatAttr(spec, "alpha", 0.9);
        base.beta = floatAttr(spec, "beta", 0.999);
        base.epsilon = floatAttr(spec, "epsilon", 1e-6);
        base.normPost = floatAttr(spec, "norm_coefficient_post", 0);
    } else {
        const std::string mode = stringAttr(spec, "mode", "standard");
        if (mode != "standard" && mode != "nesterov")
            return planError(spec, "mode '" + mode + "' is not standard or nesterov");
        base.kind = mode == "standard" ? Optimizer::Momentum : Optimizer::Nesterov;
        base.alpha = floatAttr(spec, "alpha", 0);
        base.beta = floatAttr(spec, "beta", 0);
    }
    std::vector<IndexingStep> steps;
    for (int k = 0; k < n; ++k) {
        Optimizer op = base;
        op.x = 2 + k;
        op.g = 2 + n + k;
        op.elem = elemOf(spec.inputs[static_cast<std::size_t>(op.x)].dtype);
        op.xOut = k;
        if (adagrad) {
            op.h = 2 + 2 * n + k;
            op.hOut = n + k;
        } else {
            op.v = 2 + 2 * n + k;
            op.vOut = n + k;
            if (adam) {
                op.h = 2 + 3 * n + k;
                op.hOut = 2 * n + k;
            }
        }
        steps.push_back(elements(op, spec.inputs[static_cast<std::size_t>(op.x)].elementCount()));
    }
    return steps;
}

Plan randomDraws(const KernelSpec& spec) {
    const std::string& name = spec.node->op->name;
    Random op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.seed = static_cast<std::uint64_t>(static_cast<std::int64_t>(floatAttr(spec, "seed", 0)));
    if (name == "RandomUniform" || name == "RandomUniformLike") {
        op.kind = Random::Uniform;
        op.a = floatAttr(spec, "low", 0);
        op.b = floatAttr(spec, "high", 1);
    } else if (name == "RandomNormal" || name == "RandomNormalLike") {
        op.kind = Random::Normal;
        op.a = floatAttr(spec, "mean", 0);
        op.b = floatAttr(spec, "scale", 1);
    } else if (name == "Bernoulli") {
        if (spec.inputs.empty() || spec.inputs[0].shape != spec.outputs[0].shape)
            return planError(spec, "the output must have the probabilities' shape");
        op.kind = Random::Bernoulli;
        op.inElem = elemOf(spec.inputs[0].dtype);
    } else if (name == "Multinomial") {
        const Dims& in = shapeOf(spec, 0);
        const Dims& out = spec.outputs[0].shape;
        if (in.size() != 2 || out.size() != 2 || out[0] != in[0] || in[1] < 1)
            return planError(spec, "expected logits [batch, classes] and an output [batch, "
                                   "sample_size]");
        op.kind = Random::Multinomial;
        op.inElem = elemOf(spec.inputs[0].dtype);
        op.classes = in[1];
        op.samples = std::max<std::int64_t>(out[1], 1);
    } else {
        return planError(spec, "not a random operator");
    }
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan dropout(const KernelSpec& spec) {
    Dropout op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.ratioInput = geometry::inputAt(spec, 1);
    op.trainingInput = geometry::inputAt(spec, 2);
    if (op.ratioInput >= 0)
        op.ratioElem = elemOf(spec.inputs[static_cast<std::size_t>(op.ratioInput)].dtype);
    if (op.trainingInput >= 0)
        op.trainingElem = elemOf(spec.inputs[static_cast<std::size_t>(op.trainingInput)].dtype);
    op.mask = spec.outputs.size() > 1;
    op.seed = static_cast<std::uint64_t>(intAttr(spec, "seed", 0));
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan batchNormTraining(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (spec.inputs.size() < 5 || in.size() < 2)
        return planError(spec, "expected data, scale, shift, mean and variance");
    BatchNormTraining op;
    for (std::size_t k = 0; k < 5; ++k)
        op.elem[k] = elemOf(spec.inputs[k].dtype);
    op.outputs = static_cast<int>(std::min<std::size_t>(spec.outputs.size(), 3));
    for (int k = 0; k < op.outputs; ++k)
        op.outElem[k] = elemOf(spec.outputs[static_cast<std::size_t>(k)].dtype);
    op.outer = in[0];
    op.channels = in[1];
    op.inner = product(in, 2);
    op.epsilon = floatAttr(spec, "epsilon", 1e-5);
    op.momentum = floatAttr(spec, "momentum", 0.9);
    return std::vector{elements(op, op.channels)};
}

Plan poolAny(const KernelSpec& spec) {
    geometry::Pooling pooling;
    if (auto error = geometry::readPooling(spec, &pooling))
        return planError(spec, *error);
    if (pooling.adaptive)
        return planError(spec, "adaptive pooling is supported in float32 only");
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    const std::size_t spatial = in.size() - 2;
    if (in.size() < 3 || spatial > 3)
        return planError(spec, "pooling over 1 to 3 spatial dimensions only");
    PoolAny op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.spatial = static_cast<int>(spatial);
    for (std::size_t d = 0; d < spatial; ++d) {
        op.in[d] = in[d + 2];
        op.out[d] = out[d + 2];
        op.kernel[d] = pooling.window.kernel[d];
        op.stride[d] = pooling.window.strides[d];
        op.dilation[d] = pooling.window.dilation[d];
        op.padL[d] = pooling.window.padL[d];
    }
    op.isMax = pooling.isMax;
    op.includePadding = pooling.includePadding;
    op.indices = spec.outputs.size() > 1;
    op.columnMajor = intAttr(spec, "storage_order", 0) != 0;
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

} // namespace placer::indexing
