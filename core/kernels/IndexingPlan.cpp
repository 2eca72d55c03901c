// Planning the shared indexing functors (kernels/IndexingPlan.h): each family's steps from its
// kernel spec, and the dispatch over every family.
#include "kernels/IndexingPlan.h"

#include "kernels/IndexingSteps.h"
#include "kernels/KernelSupport.h"
#include "kernels/OpGeometry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace placer {

using namespace indexing;

namespace {

Plan gatherElements(const KernelSpec& spec) {
    const Dims& data = shapeOf(spec, 0);
    GatherElements op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.axis = axisAttr(spec, static_cast<int>(data.size()), 0);
    if (op.axis < 0 || shapeOf(spec, 1).size() != data.size())
        return planError(spec, "the axis or the indices' rank does not match the data");
    if (!toFunctorShape(spec.outputs[0].shape, &op.shape))
        return planError(spec, kFunctorRankError);
    op.dataStrides = toFunctorStrides(contiguousStrides(data));
    op.axisDim = data[static_cast<std::size_t>(op.axis)];
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan scatterElements(const KernelSpec& spec) {
    const Dims& data = shapeOf(spec, 0);
    CopyInput copy;
    copy.elementSize = dtypeSize(spec.outputs[0].dtype);
    ScatterElements op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.axis = axisAttr(spec, static_cast<int>(data.size()), 0);
    op.reduction = reductionCode(spec.node->attrs.getString("reduction", "none").value_or("none"));
    if (op.axis < 0 || op.reduction < 0 || spec.inputs.size() < 3)
        return planError(spec, "a bad axis, reduction or input count");
    if (!toFunctorShape(shapeOf(spec, 1), &op.shape))
        return planError(spec, kFunctorRankError);
    op.outStrides = toFunctorStrides(contiguousStrides(data));
    op.axisDim = data[static_cast<std::size_t>(op.axis)];
    op.count = spec.inputs[1].elementCount();
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    return std::vector{elements(copy, spec.outputs[0].elementCount()), elements(op, 1)};
}

/// The data dimensions an index tuple of length k addresses, from `first` on.
bool tupleGeometry(const Dims& data, std::size_t first, std::int64_t k, i64* dims, i64* strides) {
    if (k < 0 || first + static_cast<std::size_t>(k) > data.size() || k > kMaxRank)
        return false;
    const Dims own = contiguousStrides(data);
    for (std::int64_t j = 0; j < k; ++j) {
        dims[j] = data[first + static_cast<std::size_t>(j)];
        strides[j] = own[first + static_cast<std::size_t>(j)];
    }
    return true;
}

Plan gatherND(const KernelSpec& spec) {
    const Dims& data = shapeOf(spec, 0);
    const Dims& indices = shapeOf(spec, 1);
    const auto batch = static_cast<std::size_t>(intAttr(spec, "batch_dims", 0));
    if (indices.empty() || batch >= indices.size())
        return planError(spec, "malformed indices");
    GatherND op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.tupleLength = indices.back();
    if (!tupleGeometry(data, batch, op.tupleLength, op.dims, op.strides))
        return planError(spec, "the index tuples are longer than the data's rank");
    op.slice = product(data, batch + static_cast<std::size_t>(op.tupleLength));
    op.tuplesPerBatch = product(indices, batch, indices.size() - 1);
    op.batchStride = product(data, batch);
    if (op.slice == 0 || op.tuplesPerBatch == 0)
        return std::vector<IndexingStep>{};
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan scatterND(const KernelSpec& spec) {
    const Dims& data = shapeOf(spec, 0);
    const Dims& indices = shapeOf(spec, 1);
    if (indices.empty() || spec.inputs.size() < 3)
        return planError(spec, "malformed indices");
    CopyInput copy;
    copy.elementSize = dtypeSize(spec.outputs[0].dtype);
    ScatterND op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.tupleLength = indices.back();
    op.reduction = reductionCode(spec.node->attrs.getString("reduction", "none").value_or("none"));
    if (op.reduction < 0 || !tupleGeometry(data, 0, op.tupleLength, op.dims, op.strides))
        return planError(spec, "a bad reduction, or index tuples longer than the data's rank");
    op.slice = product(data, static_cast<std::size_t>(op.tupleLength));
    op.rows = product(indices, 0, indices.size() - 1);
    return std::vector{elements(copy, spec.outputs[0].elementCount()), elements(op, 1)};
}

Plan oneHot(const KernelSpec& spec) {
    const Dims& out = spec.outputs[0].shape;
    const int axis = axisAttr(spec, static_cast<int>(out.size()), -1);
    if (axis < 0 || spec.inputs.size() < 3)
        return planError(spec, "a bad axis or input count");
    OneHot op;
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[0].dtype);
    op.valueElem = elemOf(spec.inputs[2].dtype);
    op.depth = out[static_cast<std::size_t>(axis)];
    op.inner = product(out, static_cast<std::size_t>(axis) + 1);
    if (op.depth == 0 || op.inner == 0)
        return std::vector<IndexingStep>{};
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan trilu(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (in.size() < 2)
        return planError(spec, "the input must have at least two dimensions");
    Trilu op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.elem = elemOf(spec.outputs[0].dtype);
    op.rows = in[in.size() - 2];
    op.cols = in.back();
    op.upper = intAttr(spec, "upper", 1) != 0;
    op.kInput = geometry::inputAt(spec, 1);
    if (op.kInput >= 0)
        op.kElem = elemOf(spec.inputs[static_cast<std::size_t>(op.kInput)].dtype);
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan cumSum(const KernelSpec& spec) {
    if (spec.inputs.size() < 2)
        return planError(spec, "the axis input is missing");
    CumSum op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.axisElem = elemOf(spec.inputs[1].dtype);
    if (!toFunctorShape(shapeOf(spec, 0), &op.shape))
        return planError(spec, kFunctorRankError);
    op.exclusive = intAttr(spec, "exclusive", 0) != 0;
    op.reverse = intAttr(spec, "reverse", 0) != 0;
    // The axis is read at run time: one thread per element bounds the number of lines.
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

/// Lines along `axis` (opset 13 and later), or rows of the input coerced to 2-D at `axis`.
void lineGeometry(const KernelSpec& spec, const Dims& in, int axis, i64* dim, i64* inner,
                  i64* lines) {
    if (spec.onnxOpset > 0 && spec.onnxOpset < 13) {
        *dim = product(in, static_cast<std::size_t>(axis));
        *inner = 1;
    } else {
        *dim = in[static_cast<std::size_t>(axis)];
        *inner = product(in, static_cast<std::size_t>(axis) + 1);
    }
    *lines = *dim == 0 ? 0 : product(in) / *dim;
}

Plan hardmax(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const bool legacy = spec.onnxOpset > 0 && spec.onnxOpset < 13;
    const int axis = axisAttr(spec, static_cast<int>(in.size()), legacy ? 1 : -1);
    if (axis < 0)
        return planError(spec, "axis out of range");
    Hardmax op;
    op.elem = elemOf(spec.outputs[0].dtype);
    i64 lines = 0;
    lineGeometry(spec, in, axis, &op.dim, &op.inner, &lines);
    return std::vector{elements(op, lines)};
}

Plan topK(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const int axis = axisAttr(spec, static_cast<int>(in.size()), -1);
    if (axis < 0 || spec.outputs.size() != 2)
        return planError(spec, "axis out of range, or not two outputs");
    TopK op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.dim = in[static_cast<std::size_t>(axis)];
    op.inner = product(in, static_cast<std::size_t>(axis) + 1);
    op.k = spec.outputs[0].shape[static_cast<std::size_t>(axis)];
    op.largest = intAttr(spec, "largest", 1) != 0;
    if (spec.outputs[1].dtype != DType::Int64)
        return planError(spec, "the indices output must be int64");
    const i64 lines = op.dim == 0 ? 0 : product(in) / op.dim;
    return std::vector{elements(op, op.k == 0 ? 0 : lines)};
}

Plan spaceDepth(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const std::int64_t b = intAttr(spec, "blocksize", 0);
    if (in.size() != 4 || b <= 0)
        return planError(spec, "needs a 4-D input and a positive blocksize");
    const std::int64_t n = in[0], c = in[1], h = in[2], w = in[3];
    Dims view, perm;
    if (spec.node->op->name == "SpaceToDepth") {
        view = {n, c, h / b, b, w / b, b};
        perm = {0, 3, 5, 1, 2, 4};
    } else if (spec.node->attrs.getString("mode", "DCR").value_or("DCR") == "CRD") {
        view = {n, c / (b * b), b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
    } else {
        view = {n, b, b, c / (b * b), h, w};
        perm = {0, 3, 4, 1, 5, 2};
    }
    if (product(view) != product(in))
        return planError(spec, "the blocksize does not divide the input");
    const Dims own = contiguousStrides(view);
    Dims shape, strides;
    for (std::int64_t p : perm) {
        shape.push_back(view[static_cast<std::size_t>(p)]);
        strides.push_back(own[static_cast<std::size_t>(p)]);
    }
    StridedView op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    if (!toFunctorShape(shape, &op.shape))
        return planError(spec, kFunctorRankError);
    op.strides = toFunctorStrides(strides);
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

} // namespace

Result<functors::Resize> readResize(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    if (in.size() != out.size())
        return planError(spec, "the output rank differs from the input's");
    Resize op;
    op.elem = elemOf(spec.outputs[0].dtype);
    if (!toFunctorShape(in, &op.in) || !toFunctorShape(out, &op.out))
        return planError(spec, kFunctorRankError);
    const std::string mode = spec.node->attrs.getString("mode", "nearest").value_or("nearest");
    op.mode = mode == "linear" ? 1 : mode == "cubic" ? 2 : mode == "nearest" ? 0 : -1;
    const std::string transform =
        spec.node->attrs.getString("coordinate_transformation_mode", "half_pixel")
            .value_or("half_pixel");
    static const char* const kTransforms[] = {"half_pixel",         "asymmetric",
                                              "pytorch_half_pixel", "align_corners",
                                              "tf_crop_and_resize", "tf_half_pixel_for_nn"};
    op.transform = -1;
    for (int t = 0; t < 6; ++t) {
        if (transform == kTransforms[t])
            op.transform = t;
    }
    const std::string nearest = spec.node->attrs.getString("nearest_mode", "round_prefer_floor")
                                    .value_or("round_prefer_floor");
    op.nearestMode = nearest == "round_prefer_ceil" ? 1
                     : nearest == "floor"           ? 2
                     : nearest == "ceil"            ? 3
                                                    : 0;
    if (op.mode < 0 || op.transform < 0)
        return planError(spec, "mode '" + mode + "' or coordinate transformation '" + transform +
                                   "' is not known");
    op.cubicA = spec.node->attrs.getFloat("cubic_coeff_a", -0.75).value_or(-0.75);
    op.excludeOutside = intAttr(spec, "exclude_outside", 0) != 0;
    op.extrapolation = spec.node->attrs.getFloat("extrapolation_value", 0).value_or(0);
    // Resize(x, roi?, scales?, sizes?); opset 10: Resize(x, scales).
    const bool opset10 = spec.onnxOpset == 10;
    const auto scales = constantDoubles(spec, geometry::inputAt(spec, opset10 ? 1 : 2));
    const auto roi = opset10 ? std::nullopt : constantDoubles(spec, geometry::inputAt(spec, 1));
    for (std::size_t d = 0; d < in.size(); ++d) {
        op.scale[d] =
            scales && scales->size() == in.size() && (*scales)[d] > 0
                ? (*scales)[d]
                : (in[d] == 0 ? 1.0 : static_cast<double>(out[d]) / static_cast<double>(in[d]));
        // ONNX measures coordinates against the unrounded output length when scales are given.
        op.length[d] = scales && scales->size() == in.size() && (*scales)[d] > 0
                           ? static_cast<double>(in[d]) * (*scales)[d]
                           : static_cast<double>(out[d]);
        op.roiStart[d] = roi && roi->size() == 2 * in.size() ? (*roi)[d] : 0.0;
        op.roiEnd[d] = roi && roi->size() == 2 * in.size() ? (*roi)[d + in.size()] : 1.0;
    }
    return op;
}

namespace {

Plan resize(const KernelSpec& spec) {
    auto op = readResize(spec);
    if (!op)
        return op.error();
    return std::vector{elements(op.value(), spec.outputs[0].elementCount())};
}

Plan convTranspose(const KernelSpec& spec) {
    const Dims& x = shapeOf(spec, 0);
    const Dims& w = shapeOf(spec, 1);
    const Dims& out = spec.outputs[0].shape;
    if (x.size() < 3 || w.size() != x.size() || out.size() != x.size())
        return planError(spec, "the input, weight and output ranks do not match");
    const std::size_t spatial = x.size() - 2;
    ConvTranspose op;
    op.xElem = elemOf(spec.inputs[0].dtype);
    op.wElem = elemOf(spec.inputs[1].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.hasBias = optionalElem(spec, 2, &op.bElem);
    op.groups = intAttr(spec, "group", 1);
    op.channels = x[1];
    op.outChannels = out[1];
    if (op.groups <= 0 || x[1] % op.groups != 0 || out[1] != w[1] * op.groups)
        return planError(spec, "the channels do not match the weight and groups");
    Dims inSpatial(x.begin() + 2, x.end()), outSpatial(out.begin() + 2, out.end()),
        kernel(w.begin() + 2, w.end());
    if (!toFunctorShape(inSpatial, &op.inSpatial) || !toFunctorShape(outSpatial, &op.outSpatial) ||
        !toFunctorShape(kernel, &op.kernel))
        return planError(spec, kFunctorRankError);
    auto list = [&](const char* name, std::int64_t fallback, std::size_t count) {
        Dims values = spec.node->attrs.getInts(name, {}).value_or(Dims{});
        values.resize(count, fallback);
        return values;
    };
    const Dims strides = list("strides", 1, spatial), dilations = list("dilations", 1, spatial),
               pads = list("pads", 0, 2 * spatial),
               outputPadding = list("output_padding", 0, spatial);
    const std::string autoPad = spec.node->attrs.getString("auto_pad", "NOTSET").value_or("NOTSET");
    const bool explicitShape = spec.node->attrs.find("output_shape") != nullptr;
    for (std::size_t d = 0; d < spatial; ++d) {
        op.stride[d] = strides[d];
        op.dilation[d] = dilations[d];
        if (strides[d] <= 0 || dilations[d] <= 0)
            return planError(spec, "strides and dilations must be positive");
        if (explicitShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            // The padding the output shape implies (never negative), split as ONNX says: the
            // odd one at the end for SAME_UPPER, at the start otherwise.
            const std::int64_t total =
                std::max<std::int64_t>(0, strides[d] * (inSpatial[d] - 1) + outputPadding[d] +
                                              ((kernel[d] - 1) * dilations[d] + 1) - outSpatial[d]);
            op.padBegin[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
        } else {
            op.padBegin[d] = autoPad == "VALID" ? 0 : pads[d];
        }
    }
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan lrn(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (in.size() < 2)
        return planError(spec, "the input needs a channel dimension");
    Lrn op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.channels = in[1];
    op.inner = product(in, 2);
    op.size = intAttr(spec, "size", 1);
    op.alpha = spec.node->attrs.getFloat("alpha", 1e-4).value_or(1e-4);
    op.beta = spec.node->attrs.getFloat("beta", 0.75).value_or(0.75);
    op.bias = spec.node->attrs.getFloat("bias", 1.0).value_or(1.0);
    if (op.size <= 0)
        return planError(spec, "size must be positive");
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan eyeLike(const KernelSpec& spec) {
    const Dims& out = spec.outputs[0].shape;
    if (out.size() != 2)
        return planError(spec, "the input must be 2-D");
    EyeLike op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.cols = out[1];
    op.k = intAttr(spec, "k", 0);
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan instanceNorm(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (in.size() < 2 || spec.inputs.size() < 3)
        return planError(spec, "needs an input with channels, a scale and a bias");
    InstanceNorm op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.scaleElem = elemOf(spec.inputs[1].dtype);
    op.biasElem = elemOf(spec.inputs[2].dtype);
    op.channels = in[1];
    op.count = product(in, 2);
    op.epsilon = spec.node->attrs.getFloat("epsilon", 1e-5).value_or(1e-5);
    if (op.count == 0)
        return std::vector<IndexingStep>{};
    return std::vector{IndexingStep{op, in[0] * in[1], true}};
}

Plan rmsNorm(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const bool skipped = spec.node->op->name == "com.microsoft.SkipSimplifiedLayerNormalization";
    RmsNorm op;
    op.elem = elemOf(spec.inputs[0].dtype);
    op.epsilon = spec.node->attrs.getFloat("epsilon", 1e-5).value_or(1e-5);
    std::int64_t axis = -1;
    if (skipped) {
        if (spec.inputs.size() < 3)
            return planError(spec, "needs the input, the skip and gamma");
        op.skip = 1;
        op.scale = 2;
        op.bias = spec.inputs.size() > 3 ? 3 : -1;
    } else {
        if (spec.inputs.size() < 2)
            return planError(spec, "needs the input and its scale");
        axis = spec.node->attrs.getInt("axis", -1).value_or(-1);
    }
    const auto rank = static_cast<std::int64_t>(in.size());
    if (rank < 1 || axis < -rank || axis >= rank)
        return planError(spec, "axis " + std::to_string(axis) + " is outside the input's rank");
    if (axis < 0)
        axis += rank;
    op.count = product(in, static_cast<std::size_t>(axis));
    const std::int64_t rows = product(in) / std::max<std::int64_t>(op.count, 1);
    op.scaleElem = elemOf(spec.inputs[static_cast<std::size_t>(op.scale)].dtype);
    if (spec.inputs[static_cast<std::size_t>(op.scale)].elementCount() != op.count)
        return planError(
            spec,
            "its scale has " +
                std::to_string(spec.inputs[static_cast<std::size_t>(op.scale)].elementCount()) +
                " values for rows of " + std::to_string(op.count));
    if (op.skip >= 0) {
        op.skipCount = spec.inputs[1].elementCount();
        if (op.skipCount == 0 || product(in) % op.skipCount != 0 || op.skipCount % op.count != 0)
            return planError(spec, "the skip " + spec.inputs[1].toShortString() +
                                       " does not broadcast over the input's rows");
    }
    if (op.bias >= 0 && spec.inputs[3].elementCount() != op.count)
        return planError(spec, "its bias is not a row of " + std::to_string(op.count));
    // Optional outputs: Simplified's inverse deviation; Skip's mean, inverse deviation and sum.
    const auto asked = [&](std::size_t k) {
        return k < spec.outputs.size() && spec.outputs[k].elementCount() > 0 ? static_cast<int>(k)
                                                                             : -1;
    };
    if (skipped) {
        op.meanOutput = asked(1);
        op.invOutput = asked(2);
        op.sumOutput = asked(3);
    } else {
        op.invOutput = asked(1);
    }
    for (const int k : {op.meanOutput, op.invOutput}) {
        if (k >= 0 && (spec.outputs[static_cast<std::size_t>(k)].elementCount() != rows ||
                       spec.outputs[static_cast<std::size_t>(k)].dtype != DType::Float32))
            return planError(spec, "output " + std::to_string(k) + " is not float32, one a row");
    }
    if (op.count == 0)
        return std::vector<IndexingStep>{};
    return std::vector{IndexingStep{op, rows, true}};
}

Plan mean(const KernelSpec& spec) {
    if (spec.inputs.empty() || spec.inputs.size() > static_cast<std::size_t>(Io::kMaxInputs))
        return planError(spec, "takes 1 to 6 inputs here");
    Mean op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.count = static_cast<int>(spec.inputs.size());
    const Dims& out = spec.outputs[0].shape;
    if (!toFunctorShape(out, &op.shape))
        return planError(spec, kFunctorRankError);
    for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
        if (spec.inputs[k].dtype != spec.outputs[0].dtype)
            return planError(spec, "inputs of different element types");
        op.strides[k] = toFunctorStrides(broadcastStrides(spec.inputs[k].shape, out));
    }
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan reverseSequence(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    ReverseSequence op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.lengthElem = elemOf(spec.inputs[1].dtype);
    op.timeAxis = normalizeAxis(intAttr(spec, "time_axis", 0), static_cast<int>(in.size()));
    op.batchAxis = normalizeAxis(intAttr(spec, "batch_axis", 1), static_cast<int>(in.size()));
    if (op.timeAxis < 0 || op.batchAxis < 0 || op.timeAxis == op.batchAxis)
        return planError(spec, "bad time or batch axis");
    if (!toFunctorShape(in, &op.shape))
        return planError(spec, kFunctorRankError);
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan gridSample(const KernelSpec& spec) {
    const Dims& x = shapeOf(spec, 0);
    const Dims& grid = shapeOf(spec, 1);
    const Dims& out = spec.outputs[0].shape;
    if (x.size() != 4 || grid.size() != 4 || grid[3] != 2 || out.size() != 4)
        return planError(spec, "only 4-D inputs with a [N, H, W, 2] grid");
    GridSample op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.gridElem = elemOf(spec.inputs[1].dtype);
    static_cast<functors::Planes&>(op) = {x[0], x[1], x[2], x[3], out[2], out[3]};
    const std::string mode = spec.node->attrs.getString("mode", "bilinear").value_or("bilinear");
    op.mode = mode == "nearest" ? 0 : mode == "bicubic" ? 2 : mode == "bilinear" ? 1 : -1;
    const std::string padding =
        spec.node->attrs.getString("padding_mode", "zeros").value_or("zeros");
    op.padding = padding == "border"       ? 1
                 : padding == "reflection" ? 2
                 : padding == "zeros"      ? 0
                                           : -1;
    op.alignCorners = intAttr(spec, "align_corners", 0) != 0;
    if (op.mode < 0 || op.padding < 0)
        return planError(spec, "unknown mode '" + mode + "' or padding '" + padding + "'");
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan einsum(const KernelSpec& spec) {
    std::string equation = spec.node->attrs.getString("equation", "").value_or("");
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    const std::size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (char ch : lhs) {
        if (ch == ',')
            terms.emplace_back();
        else
            terms.back() += ch;
    }
    if (terms.size() != spec.inputs.size() ||
        terms.size() > static_cast<std::size_t>(Io::kMaxInputs))
        return planError(spec, "the equation names " + std::to_string(terms.size()) +
                                   " operands for " + std::to_string(spec.inputs.size()) +
                                   " inputs");
    // Labels: letters by character, the ellipsis' dimensions as '0'+k (right-aligned).
    struct Axis {
        char label;
    };
    std::vector<std::vector<char>> axes(terms.size());
    int ellipsis = 0;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const std::string& t = terms[k];
        const std::size_t dots = t.find("...");
        const int letters = static_cast<int>(t.size()) - (dots == std::string::npos ? 0 : 3);
        const int rank = spec.inputs[k].rank();
        const int extra = dots == std::string::npos ? 0 : rank - letters;
        if (extra < 0 || (dots == std::string::npos && letters != rank))
            return planError(spec, "operand " + std::to_string(k) + " has rank " +
                                       std::to_string(rank) + ", the equation says otherwise");
        ellipsis = std::max(ellipsis, extra);
    }
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const std::string& t = terms[k];
        const int rank = spec.inputs[k].rank();
        for (std::size_t p = 0; p < t.size(); ++p) {
            if (t.compare(p, 3, "...") == 0) {
                const int letters = static_cast<int>(t.size()) - 3;
                const int extra = rank - letters;
                for (int e = 0; e < extra; ++e)
                    axes[k].push_back(static_cast<char>('0' + ellipsis - extra + e));
                p += 2;
            } else if (std::isalpha(static_cast<unsigned char>(t[p]))) {
                axes[k].push_back(t[p]);
            } else {
                return planError(spec, std::string("unexpected '") + t[p] + "' in the equation");
            }
        }
    }
    std::vector<char> output;
    if (arrow != std::string::npos) {
        const std::string rhs = equation.substr(arrow + 2);
        for (std::size_t p = 0; p < rhs.size(); ++p) {
            if (rhs.compare(p, 3, "...") == 0) {
                for (int e = 0; e < ellipsis; ++e)
                    output.push_back(static_cast<char>('0' + e));
                p += 2;
            } else {
                output.push_back(rhs[p]);
            }
        }
    } else {
        for (int e = 0; e < ellipsis; ++e)
            output.push_back(static_cast<char>('0' + e));
        std::map<char, int> seen;
        for (const auto& list : axes)
            for (char l : list)
                if (std::isalpha(static_cast<unsigned char>(l)))
                    ++seen[l];
        for (const auto& [l, n] : seen)
            if (n == 1)
                output.push_back(l);
    }
    std::vector<char> order = output;
    for (const auto& list : axes)
        for (char l : list)
            if (std::find(order.begin(), order.end(), l) == order.end())
                order.push_back(l);
    if (static_cast<int>(order.size()) > Einsum::kMaxLabels)
        return planError(spec, "more than 16 labels");
    Einsum op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.inputs = static_cast<int>(terms.size());
    op.labels = static_cast<int>(order.size());
    op.outLabels = static_cast<int>(output.size());
    auto index = [&](char l) {
        return static_cast<int>(std::find(order.begin(), order.end(), l) - order.begin());
    };
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const Dims& shape = spec.inputs[k].shape;
        for (std::size_t a = 0; a < axes[k].size(); ++a)
            op.dims[index(axes[k][a])] = std::max(op.dims[index(axes[k][a])], shape[a]);
    }
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const Dims& shape = spec.inputs[k].shape;
        const Dims own = contiguousStrides(shape);
        for (std::size_t a = 0; a < axes[k].size(); ++a) {
            const int l = index(axes[k][a]);
            if (shape[a] != op.dims[l] && shape[a] != 1)
                return planError(spec, "label '" + std::string(1, axes[k][a]) +
                                           "' has different extents");
            if (shape[a] != 1 || op.dims[l] == 1)
                op.strides[k][l] += own[a];
        }
    }
    std::int64_t outCount = 1;
    for (int l = 0; l < op.outLabels; ++l)
        outCount *= op.dims[l];
    for (int l = op.outLabels; l < op.labels; ++l)
        op.sumCount *= op.dims[l];
    if (outCount != spec.outputs[0].elementCount())
        return planError(spec, "the equation's output does not match the output type");
    return std::vector{elements(op, outCount)};
}

} // namespace

Result<functors::Recurrent> readRecurrent(const KernelSpec& spec) {
    const std::string& name = spec.node->op->name;
    Recurrent op;
    op.kind = name == "LSTM" ? 2 : name == "GRU" ? 1 : 0;
    const int gates = op.kind == 2 ? 4 : op.kind == 1 ? 3 : 1;
    const int perDirection = op.kind == 2 ? 3 : op.kind == 1 ? 2 : 1;
    const Dims& x = shapeOf(spec, 0);
    if (x.size() != 3 || spec.inputs.size() < 3)
        return planError(spec, "needs X [seq, batch, input], W and R");
    op.elem = elemOf(spec.outputs[0].dtype);
    op.batchFirst = intAttr(spec, "layout", 0) != 0;
    op.steps = op.batchFirst ? x[1] : x[0];
    op.batch = op.batchFirst ? x[0] : x[1];
    op.inputSize = x[2];
    op.hidden =
        intAttr(spec, "hidden_size", shapeOf(spec, 2).size() == 3 ? shapeOf(spec, 2)[2] : 0);
    const std::string direction =
        spec.node->attrs.getString("direction", "forward").value_or("forward");
    op.directions = direction == "bidirectional" ? 2 : 1;
    op.reverse = direction == "reverse";
    if (op.hidden <= 0)
        return planError(spec, "needs a hidden size");
    if (shapeOf(spec, 1) != Dims{op.directions, gates * op.hidden, op.inputSize})
        return planError(spec, "W does not match the direction, hidden size and input size");
    op.clip = spec.node->attrs.getFloat("clip", 0).value_or(0);
    op.linearBeforeReset = intAttr(spec, "linear_before_reset", 0) != 0;
    op.inputForget = intAttr(spec, "input_forget", 0) != 0;
    op.bias = geometry::inputAt(spec, 3);
    op.lengths = geometry::inputAt(spec, 4);
    op.initialH = geometry::inputAt(spec, 5);
    op.initialC = op.kind == 2 ? geometry::inputAt(spec, 6) : -1;
    op.peepholes = op.kind == 2 ? geometry::inputAt(spec, 7) : -1;
    if (op.lengths >= 0)
        op.lengthElem = elemOf(spec.inputs[static_cast<std::size_t>(op.lengths)].dtype);
    auto present = [&](std::size_t k) {
        return k < spec.outputs.size() && spec.outputs[k].shape != Dims{0};
    };
    op.outY = present(0);
    op.outH = present(1);
    op.outC = op.kind == 2 && present(2);
    // Activations: ONNX's defaults, or the listed ones (per direction, in order).
    static const char* const kDefaults[3][3] = {
        {"Tanh", "", ""}, {"Sigmoid", "Tanh", ""}, {"Sigmoid", "Tanh", "Tanh"}};
    std::vector<std::string> names;
    const std::string listed = spec.node->attrs.getString("activations", "").value_or("");
    for (std::size_t start = 0; !listed.empty() && start <= listed.size();) {
        const std::size_t comma = listed.find(',', start);
        names.push_back(listed.substr(start, comma - start));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (names.empty()) {
        for (int d = 0; d < op.directions; ++d)
            for (int k = 0; k < perDirection; ++k)
                names.push_back(kDefaults[op.kind][k]);
    }
    if (static_cast<int>(names.size()) != perDirection * op.directions)
        return planError(spec, "expected " + std::to_string(perDirection * op.directions) +
                                   " activations");
    static const char* const kNames[] = {
        "Sigmoid",    "Tanh", "Relu",     "HardSigmoid", "LeakyRelu", "ThresholdedRelu",
        "ScaledTanh", "Elu",  "Softsign", "Softplus",    "Affine"};
    Dims none;
    std::vector<double> alphas, betas;
    if (const AttrValue* a = spec.node->attrs.find("activation_alpha");
        a && std::holds_alternative<std::vector<double>>(*a))
        alphas = std::get<std::vector<double>>(*a);
    if (const AttrValue* b = spec.node->attrs.find("activation_beta");
        b && std::holds_alternative<std::vector<double>>(*b))
        betas = std::get<std::vector<double>>(*b);
    std::size_t parameterAt = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
        int fn = -1;
        for (int f = 0; f < 11; ++f) {
            if (names[k] == kNames[f])
                fn = f;
        }
        if (fn < 0)
            return planError(spec, "activation '" + names[k] + "' is not known");
        Activation& a = op.act[k];
        a.fn = fn;
        // Defaults as ONNX Runtime's, when the lists do not give them.
        const bool parameters = fn == 3 || fn == 4 || fn == 5 || fn == 6 || fn == 7 || fn == 10;
        a.alpha = fn == 3 ? 0.2 : fn == 4 ? 0.01 : 1.0;
        a.beta = fn == 3 ? 0.5 : fn == 6 ? 1.0 : 0.0;
        if (parameters) {
            if (parameterAt < alphas.size())
                a.alpha = alphas[parameterAt];
            if (parameterAt < betas.size())
                a.beta = betas[parameterAt];
            ++parameterAt;
        }
    }
    return op;
}

namespace {

Plan recurrent(const KernelSpec& spec) {
    auto read = readRecurrent(spec);
    if (!read)
        return read.error();
    const Recurrent& op = read.value();
    IndexingStep step = elements(op, op.directions * op.batch);
    step.scratchBytes = op.scratchBytes();
    return std::vector{step};
}

Plan maxUnpool(const KernelSpec& spec) {
    if (spec.inputs.size() < 2)
        return planError(spec, "needs the values and their indices");
    ZeroOutput zero;
    zero.elem = elemOf(spec.outputs[0].dtype);
    MaxUnpool op;
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.count = spec.inputs[0].elementCount();
    op.outCount = spec.outputs[0].elementCount();
    if (spec.inputs[1].elementCount() != op.count)
        return planError(spec, "the indices do not match the values");
    return std::vector{elements(zero, op.outCount), elements(op, 1)};
}

Plan det(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (in.size() < 2 || in[in.size() - 1] != in[in.size() - 2])
        return planError(spec, "needs square matrices in the last two dimensions");
    Det op;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.n = in.back();
    op.matrices = spec.outputs[0].elementCount();
    IndexingStep step = elements(op, op.matrices);
    step.scratchBytes = op.scratchBytes();
    return std::vector{step};
}

} // namespace

bool runsAsSharedFunctors(const KernelSpec& spec) {
    const OpDef& op = *spec.node->op;
    if (isIndexingFamily(op.kernel.family))
        return true;
    const bool onnx = op.dialect == OpDialect::Onnx;
    switch (op.kernel.family) {
    case KernelFamily::Copy:
        return onnx && op.name == "Dropout" && geometry::checkCopy(spec).has_value();
    case KernelFamily::BatchNorm:
        return onnx && spec.node->attrs.getInt("training_mode", 0).value_or(0) != 0;
    case KernelFamily::Pool:
        return spec.outputs.size() > 1 || spec.inputs[0].dtype != DType::Float32;
    default:
        return false;
    }
}

Plan planIndexing(const KernelSpec& spec) {
    for (const TensorType& type : spec.outputs) {
        if (type.rank() > kMaxRank)
            return planError(spec, kFunctorRankError);
    }
    switch (spec.node->op->kernel.family) {
    case KernelFamily::Copy:
        return dropout(spec);
    case KernelFamily::BatchNorm:
        return batchNormTraining(spec);
    case KernelFamily::Pool:
        return poolAny(spec);
    case KernelFamily::RoiAlign:
        return roiAlign(spec);
    case KernelFamily::Dft:
        return dft(spec);
    case KernelFamily::Stft:
        return stft(spec);
    case KernelFamily::MelWeightMatrix:
        return melWeightMatrix(spec);
    case KernelFamily::TfIdf:
        return tfIdf(spec);
    case KernelFamily::Optimizer:
        return optimizer(spec);
    case KernelFamily::Random:
        return randomDraws(spec);
    case KernelFamily::GatherElements:
        return gatherElements(spec);
    case KernelFamily::ScatterElements:
        return scatterElements(spec);
    case KernelFamily::GatherND:
        return gatherND(spec);
    case KernelFamily::ScatterND:
        return scatterND(spec);
    case KernelFamily::OneHot:
        return oneHot(spec);
    case KernelFamily::Trilu:
        return trilu(spec);
    case KernelFamily::CumSum:
        return cumSum(spec);
    case KernelFamily::Hardmax:
        return hardmax(spec);
    case KernelFamily::SpaceDepth:
        return spaceDepth(spec);
    case KernelFamily::Resize:
        return resize(spec);
    case KernelFamily::ConvTranspose:
        return convTranspose(spec);
    case KernelFamily::TopK:
        return topK(spec);
    case KernelFamily::Lrn:
        return lrn(spec);
    case KernelFamily::EyeLike:
        return eyeLike(spec);
    case KernelFamily::InstanceNorm:
        return instanceNorm(spec);
    case KernelFamily::Quantize:
        return quantize(spec);
    case KernelFamily::Mean:
        return mean(spec);
    case KernelFamily::ReverseSequence:
        return reverseSequence(spec);
    case KernelFamily::GridSample:
        return gridSample(spec);
    case KernelFamily::Einsum:
        return einsum(spec);
    case KernelFamily::Recurrent:
        return recurrent(spec);
    case KernelFamily::MaxUnpool:
        return maxUnpool(spec);
    case KernelFamily::Det:
        return det(spec);
    case KernelFamily::BlockQuantMatmul:
        return blockQuantMatmul(spec);
    case KernelFamily::RmsNorm:
        return rmsNorm(spec);
    case KernelFamily::GroupQueryAttention:
        return groupQueryAttention(spec);
    case KernelFamily::Rotary:
        return rotaryEmbedding(spec);
    case KernelFamily::QuantizedMatmul:
        return quantizedMatmul(spec);
    case KernelFamily::QuantizedConv:
        return quantizedConv(spec);
    default:
        return planError(spec, "not an indexing operator");
    }
}

void bindIndexing(IndexingFunctor& op, const std::byte* const* inputs, std::size_t inputCount,
                  std::byte* const* outputs, std::size_t outputCount) {
    std::visit(
        [&](auto& functor) {
            for (std::size_t k = 0; k < inputCount && k < Io::kMaxInputs; ++k)
                functor.io.in[k] = inputs[k];
            for (std::size_t k = 0; k < outputCount && k < Io::kMaxOutputs; ++k)
                functor.io.out[k] = outputs[k];
        },
        op);
}

std::int64_t indexingScratchBytes(const KernelSpec& spec) {
    if (!spec.node || !spec.node->op || !runsAsSharedFunctors(spec))
        return 0;
    const auto plan = planIndexing(spec);
    if (!plan)
        return 0;
    std::int64_t bytes = 0;
    for (const IndexingStep& step : plan.value())
        bytes += step.scratchBytes;
    return bytes;
}

void bindScratch(IndexingFunctor& op, std::byte* scratch) {
    std::visit(
        [&](auto& functor) {
            using Op = std::decay_t<decltype(functor)>;
            if constexpr (std::is_same_v<Op, Recurrent>)
                functor.scratch = reinterpret_cast<float*>(scratch);
            else if constexpr (std::is_same_v<Op, Det>)
                functor.scratch = reinterpret_cast<double*>(scratch);
        },
        op);
}

} // namespace placer
