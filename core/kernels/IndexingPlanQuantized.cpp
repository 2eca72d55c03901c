// The quantised operators, planned as IndexingPlan.cpp plans the rest: QuantizeLinear and
// DequantizeLinear, MatMulInteger and QLinearMatMul, ConvInteger and QLinearConv, and ONNX
// Runtime's MatMulNBits (kernels/LayerFunctors.h, IndexingFunctors.h).
#include "kernels/IndexingSteps.h"

#include "kernels/OpGeometry.h"

namespace placer::indexing {

namespace {

/// A quantization parameter at ONNX input `position`, per index when it has `count` values.
QuantParam quantParam(const KernelSpec& spec, int position, std::int64_t count) {
    QuantParam q;
    q.input = geometry::inputAt(spec, position);
    if (q.input >= 0) {
        const TensorType& type = spec.inputs[static_cast<std::size_t>(q.input)];
        q.elem = elemOf(type.dtype);
        q.perIndex = type.elementCount() > 1 && type.elementCount() == count;
    }
    return q;
}

/// The quantized operands' input positions: 0 and 1 for the integer op, 0 and 3 for its QLinear
/// form (`qlinearName`, its scales and zero points between); false when one is missing.
bool quantOperands(const KernelSpec& spec, const char* qlinearName, bool* qlinear, int* first,
                   int* second) {
    *qlinear = spec.node->op->name == qlinearName;
    *first = geometry::inputAt(spec, 0);
    *second = geometry::inputAt(spec, *qlinear ? 3 : 1);
    return *first >= 0 && *second >= 0;
}

} // namespace

Plan blockQuantMatmul(const KernelSpec& spec) {
    geometry::BlockQuant q;
    if (auto problem = geometry::readBlockQuant(spec, &q))
        return planError(spec, *problem);
    BlockQuantMatmul op;
    static_cast<functors::BlockQuantLayout&>(op) = q;
    op.elem = elemOf(spec.inputs[0].dtype);
    return std::vector{elements(op, q.rows * q.n)};
}

Plan quantizedMatmul(const KernelSpec& spec) {
    QuantizedMatmul op;
    bool qlinear = false;
    if (!quantOperands(spec, "QLinearMatMul", &qlinear, &op.a, &op.b))
        return planError(spec, "an operand is missing");
    Dims a = spec.inputs[static_cast<std::size_t>(op.a)].shape;
    Dims b = spec.inputs[static_cast<std::size_t>(op.b)].shape;
    if (a.size() < 2 || b.size() < 2)
        return planError(spec, "operands of rank 2 or more only");
    op.m = a[a.size() - 2];
    op.k = a.back();
    op.n = b.back();
    if (b[b.size() - 2] != op.k)
        return planError(spec, "the inner dimensions differ");
    op.aElem = elemOf(spec.inputs[static_cast<std::size_t>(op.a)].dtype);
    op.bElem = elemOf(spec.inputs[static_cast<std::size_t>(op.b)].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.requantized = qlinear;
    if (qlinear) {
        op.aScale = quantParam(spec, 1, op.m);
        op.aZero = quantParam(spec, 2, op.m);
        op.bScale = quantParam(spec, 4, op.n);
        op.bZero = quantParam(spec, 5, op.n);
        op.yScale = quantParam(spec, 6, 1);
        op.yZero = quantParam(spec, 7, 1);
    } else {
        op.aZero = quantParam(spec, 2, op.m);
        op.bZero = quantParam(spec, 3, op.n);
    }
    const Dims& out = spec.outputs[0].shape;
    const Dims outBatch(out.begin(), out.end() - 2);
    const Dims aBatch(a.begin(), a.end() - 2), bBatch(b.begin(), b.end() - 2);
    if (!toFunctorShape(outBatch, &op.batch))
        return planError(spec, kFunctorRankError);
    op.aBatch = toFunctorStrides(broadcastStrides(aBatch, outBatch));
    op.bBatch = toFunctorStrides(broadcastStrides(bBatch, outBatch));
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan quantizedConv(const KernelSpec& spec) {
    QuantizedConv op;
    bool qlinear = false;
    if (!quantOperands(spec, "QLinearConv", &qlinear, &op.x, &op.w))
        return planError(spec, "an operand is missing");
    // The window as a float convolution of the same operands reads it.
    KernelSpec view = spec;
    view.inputs = {spec.inputs[static_cast<std::size_t>(op.x)],
                   spec.inputs[static_cast<std::size_t>(op.w)]};
    geometry::Convolution conv;
    if (auto error = geometry::readConvolution(view, &conv))
        return planError(spec, *error);
    const Dims& in = view.inputs[0].shape;
    const Dims& w = view.inputs[1].shape;
    const Dims& out = spec.outputs[0].shape;
    op.channels = in[1];
    op.outChannels = out[1];
    op.groups = conv.groups;
    if (!toFunctorShape(Dims(in.begin() + 2, in.end()), &op.inSpatial) ||
        !toFunctorShape(Dims(out.begin() + 2, out.end()), &op.outSpatial) ||
        !toFunctorShape(Dims(w.begin() + 2, w.end()), &op.kernel))
        return planError(spec, kFunctorRankError);
    for (std::size_t d = 0; d + 2 < in.size(); ++d) {
        op.stride[d] = conv.window.strides[d];
        op.dilation[d] = conv.window.dilation[d];
        op.padBegin[d] = conv.window.padL[d];
    }
    op.xElem = elemOf(view.inputs[0].dtype);
    op.wElem = elemOf(view.inputs[1].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.requantized = qlinear;
    if (qlinear) {
        op.xScale = quantParam(spec, 1, 1);
        op.xZero = quantParam(spec, 2, 1);
        op.wScale = quantParam(spec, 4, op.outChannels);
        op.wZero = quantParam(spec, 5, op.outChannels);
        op.yScale = quantParam(spec, 6, 1);
        op.yZero = quantParam(spec, 7, 1);
        op.bias = geometry::inputAt(spec, 8);
        if (op.bias >= 0)
            op.biasElem = elemOf(spec.inputs[static_cast<std::size_t>(op.bias)].dtype);
    } else {
        op.xZero = quantParam(spec, 2, 1);
        op.wZero = quantParam(spec, 3, op.outChannels);
    }
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

Plan quantize(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    if (spec.inputs.size() < 2)
        return planError(spec, "the scale input is missing");
    Quantize op;
    op.dequantize = spec.node->op->name == "DequantizeLinear";
    op.xElem = elemOf(spec.inputs[0].dtype);
    op.scaleElem = elemOf(spec.inputs[1].dtype);
    op.outElem = elemOf(spec.outputs[0].dtype);
    op.hasZero = optionalElem(spec, 2, &op.zeroElem);
    if (!op.dequantize && spec.outputs[0].dtype != DType::UInt8 &&
        spec.outputs[0].dtype != DType::Int8)
        return planError(spec, "quantizes to uint8 or int8 only");
    const std::int64_t channels = spec.inputs[1].elementCount();
    if (channels > 1) {
        const int axis = axisAttr(spec, static_cast<int>(in.size()), 1);
        if (axis < 0 || in[static_cast<std::size_t>(axis)] != channels)
            return planError(spec, "the scale's length does not match the axis");
        op.perChannel = true;
        op.channels = channels;
        op.inner = product(in, static_cast<std::size_t>(axis) + 1);
    }
    return std::vector{elements(op, spec.outputs[0].elementCount())};
}

} // namespace placer::indexing
