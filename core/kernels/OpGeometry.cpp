// Reading an operator's attributes and shapes once for every backend's kernels
// (kernels/OpGeometry.h).
#include "kernels/OpGeometry.h"

#include "kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace placer::geometry {

Problem readWindow(const KernelSpec& spec, const Dims& in, const Dims& out, Dims kernel,
                   Window* window) {
    const Attrs& attrs = spec.node->attrs;
    const std::size_t spatial = in.size() - 2;
    const bool relay = spec.node->op->dialect == OpDialect::Relay;
    auto list = [&](const char* name, std::int64_t fallback) {
        Dims values = attrs.getInts(name, {}).value_or(Dims{});
        if (values.empty())
            values.assign(spatial, fallback);
        if (values.size() == 1)
            values.assign(spatial, values[0]);
        return values;
    };
    window->kernel = std::move(kernel);
    window->strides = list("strides", 1);
    window->dilation = list(relay ? "dilation" : "dilations", 1);
    Dims pads = attrs.getInts(relay ? "padding" : "pads", {}).value_or(Dims{});
    if (pads.empty())
        pads.assign(2 * spatial, 0);
    if (pads.size() == 1)
        pads.assign(2 * spatial, pads[0]);
    if (pads.size() == spatial)
        pads.insert(pads.end(), pads.begin(), pads.end());
    if (window->kernel.size() != spatial || window->strides.size() != spatial ||
        window->dilation.size() != spatial || pads.size() != 2 * spatial)
        return "window attributes do not match the " + std::to_string(spatial) +
               " spatial dimensions";
    const std::string autoPad = attrs.getString("auto_pad", "NOTSET").value_or("NOTSET");
    window->padL.assign(spatial, 0);
    window->padR.assign(spatial, 0);
    for (std::size_t i = 0; i < spatial; ++i) {
        const std::int64_t extent = (window->kernel[i] - 1) * window->dilation[i] + 1;
        const std::int64_t needed =
            (out[i + 2] - 1) * window->strides[i] + extent - in[i + 2]; // total padding used
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            const std::int64_t total = std::max<std::int64_t>(0, needed);
            window->padL[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            window->padR[i] = total - window->padL[i];
        } else if (autoPad == "VALID") {
            window->padR[i] = std::max<std::int64_t>(0, needed);
        } else {
            window->padL[i] = pads[i];
            window->padR[i] = std::max(pads[i + spatial], needed - pads[i]);
        }
        if (window->strides[i] <= 0 || window->dilation[i] <= 0 || window->kernel[i] <= 0)
            return std::string("strides, dilations and kernel sizes must be positive");
    }
    return std::nullopt;
}

Problem readConvolution(const KernelSpec& spec, Convolution* conv) {
    const Attrs& attrs = spec.node->attrs;
    const Dims& in = spec.inputs[0].shape;
    const Dims& w = spec.inputs[1].shape;
    const Dims& out = spec.outputs[0].shape;
    if (in.size() < 3 || in.size() > 5 || w.size() != in.size() || out.size() != in.size())
        return "expected 1-D, 2-D or 3-D convolution shapes";
    if (spec.node->op->dialect == OpDialect::Relay) {
        const std::string data = attrs.getString("data_layout", "NCHW").value_or("");
        const std::string kernel = attrs.getString("kernel_layout", "OIHW").value_or("");
        if (data != "NCHW" || kernel != "OIHW")
            return "only NCHW data with OIHW kernels is supported (got " + data + "/" + kernel +
                   ")";
    }
    conv->groups = attrs.getInt(spec.node->op->dialect == OpDialect::Relay ? "groups" : "group", 1)
                       .value_or(1);
    if (conv->groups <= 0 || in[1] % conv->groups != 0 || w[0] % conv->groups != 0 ||
        w[1] * conv->groups != in[1])
        return "channels do not divide into " + std::to_string(conv->groups) + " groups";
    conv->hasBias = spec.inputs.size() > 2;
    return readWindow(spec, in, out, Dims(w.begin() + 2, w.end()), &conv->window);
}

Problem readMatrixProduct(const KernelSpec& spec, MatrixProduct* p) {
    const std::string& op = spec.node->op->name;
    const Attrs& attrs = spec.node->attrs;
    Dims a = spec.inputs[0].shape, b = spec.inputs[1].shape;
    MatrixOperand& ma = p->a;
    MatrixOperand& mb = p->b;
    if (op == "nn.dense") {
        if (a.empty() || b.size() != 2)
            return "expected data [..., K] and weight [N, K]";
        ma = {{}, product(a, 0, a.size() - 1), a.back(), false};
        mb = {{}, b[1], b[0], true};
    } else if (op == "Gemm") {
        if (a.size() != 2 || b.size() != 2)
            return "Gemm takes 2-D operands";
        const bool ta = attrs.getInt("transA", 0).value_or(0) != 0;
        const bool tb = attrs.getInt("transB", 0).value_or(0) != 0;
        ma = {{}, ta ? a[1] : a[0], ta ? a[0] : a[1], ta};
        mb = {{}, tb ? b[1] : b[0], tb ? b[0] : b[1], tb};
        p->alpha = static_cast<float>(attrs.getFloat("alpha", 1).value_or(1));
        p->beta = static_cast<float>(attrs.getFloat("beta", 1).value_or(1));
        if (spec.inputs.size() > 2 && p->beta != 0)
            p->biasInput = 2;
    } else {
        // nn.matmul, nn.batch_matmul (transpose_b defaults to true) and ONNX MatMul.
        const bool ta = attrs.getBool("transpose_a", false).value_or(false);
        const bool tb =
            attrs.getBool("transpose_b", op == "nn.batch_matmul").value_or(op == "nn.batch_matmul");
        if (a.empty() || b.empty())
            return "matrix operands must have a rank";
        if (a.size() == 1)
            a.insert(a.begin(), 1);
        if (b.size() == 1)
            b.push_back(1);
        const std::size_t ra = a.size(), rb = b.size();
        ma = {Dims(a.begin(), a.end() - 2), ta ? a[ra - 1] : a[ra - 2], ta ? a[ra - 2] : a[ra - 1],
              ta};
        mb = {Dims(b.begin(), b.end() - 2), tb ? b[rb - 1] : b[rb - 2], tb ? b[rb - 2] : b[rb - 1],
              tb};
    }
    if (ma.cols != mb.rows)
        return "inner dimensions differ (" + std::to_string(ma.cols) + " and " +
               std::to_string(mb.rows) + ")";
    p->outBatch = broadcastShapes(ma.batch, mb.batch);
    p->batches = product(p->outBatch);
    p->m = ma.rows;
    p->n = mb.cols;
    p->k = ma.cols;
    if (p->batches * p->m * p->n != spec.outputs[0].elementCount())
        return "the output type does not match the product's shape";
    return std::nullopt;
}

Problem readPooling(const KernelSpec& spec, Pooling* pooling) {
    const std::string& op = spec.node->op->name;
    const Attrs& attrs = spec.node->attrs;
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    if (in.size() < 3 || in.size() > 5 || out.size() != in.size())
        return "expected N, C and 1 to 3 spatial dimensions";
    if (op.starts_with("nn.") && attrs.getString("layout", "NCHW").value_or("") != "NCHW")
        return "only the NCHW layout is supported";
    const std::size_t spatial = in.size() - 2;
    pooling->isMax = op == "nn.max_pool2d" || op == "MaxPool" || op == "nn.global_max_pool2d" ||
                     op == "GlobalMaxPool";
    Window& window = pooling->window;
    if (op.find("global") != std::string::npos || op.starts_with("Global") ||
        op == "nn.adaptive_avg_pool2d") {
        window.kernel.assign(spatial, 1);
        window.strides.assign(spatial, 1);
        window.dilation.assign(spatial, 1);
        window.padL.assign(spatial, 0);
        window.padR.assign(spatial, 0);
        for (std::size_t i = 0; i < spatial; ++i) {
            if (out[i + 2] == 0 || in[i + 2] % out[i + 2] != 0) {
                pooling->adaptive = true;
                if (in.size() != 4 || pooling->isMax)
                    return "adaptive pooling with uneven windows is 2-D average pooling only";
                return std::nullopt;
            }
            window.kernel[i] = window.strides[i] = in[i + 2] / out[i + 2];
        }
    } else {
        Dims kernel = attrs.getInts(op.starts_with("nn.") ? "pool_size" : "kernel_shape", {})
                          .value_or(Dims{});
        if (kernel.size() == 1)
            kernel.assign(spatial, kernel[0]);
        if (auto error = readWindow(spec, in, out, kernel, &window))
            return error;
    }
    if (!pooling->isMax) {
        const bool include = attrs.getInt("count_include_pad", 0).value_or(0) != 0;
        bool padded = false;
        for (std::size_t i = 0; i < spatial; ++i)
            padded = padded || window.padL[i] > 0;
        pooling->includePadding = include && padded;
    }
    return std::nullopt;
}

Problem readBatchNorm(const KernelSpec& spec, Normalization* norm) {
    const Attrs& attrs = spec.node->attrs;
    const bool relay = spec.node->op->dialect == OpDialect::Relay;
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    norm->axis = normalizeAxis(relay ? attrs.getInt("axis", 1).value_or(1) : 1, rank);
    if (norm->axis < 0 || spec.inputs.size() < 5)
        return "expected data, scale, shift, mean and variance";
    if (!relay && attrs.getInt("training_mode", 0).value_or(0) != 0)
        return "training mode (batch statistics, updated running mean and variance) is not "
               "supported; export the model in inference mode (model.eval())";
    norm->epsilon = static_cast<float>(attrs.getFloat("epsilon", 1e-5).value_or(1e-5));
    norm->center = !relay || attrs.getBool("center", true).value_or(true);
    norm->scale = !relay || attrs.getBool("scale", true).value_or(true);
    const auto axis = static_cast<std::size_t>(norm->axis);
    norm->outer = product(in, 0, axis);
    norm->channels = in[axis];
    norm->inner = product(in, axis + 1);
    return std::nullopt;
}

Problem readLayerNorm(const KernelSpec& spec, Normalization* norm) {
    const Attrs& attrs = spec.node->attrs;
    const bool relay = spec.node->op->dialect == OpDialect::Relay;
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    norm->axis = normalizeAxis(attrs.getInt("axis", -1).value_or(-1), rank);
    if (norm->axis < 0)
        return "axis out of range";
    if (!relay && attrs.getInt("training_mode", 0).value_or(0) != 0)
        return "training mode (batch statistics, updated running mean and variance) is not "
               "supported; export the model in inference mode (model.eval())";
    norm->epsilon = static_cast<float>(attrs.getFloat("epsilon", 1e-5).value_or(1e-5));
    norm->scale = spec.inputs.size() > 1 && (!relay || attrs.getBool("scale", true).value_or(true));
    norm->center =
        spec.inputs.size() > 2 && (!relay || attrs.getBool("center", true).value_or(true));
    // Relay normalises over one axis; ONNX over every axis from `axis` on.
    const auto axis = static_cast<std::size_t>(norm->axis);
    norm->outer = product(in, 0, axis);
    norm->channels = relay ? in[axis] : product(in, axis);
    norm->inner = relay ? product(in, axis + 1) : 1;
    return std::nullopt;
}

Problem readBlockQuant(const KernelSpec& spec, BlockQuant* quant) {
    const Attrs& attrs = spec.node->attrs;
    BlockQuant& q = *quant;
    q.k = attrs.getInt("K", 0).value_or(0);
    q.n = attrs.getInt("N", 0).value_or(0);
    q.bits = static_cast<int>(attrs.getInt("bits", 4).value_or(4));
    q.blockSize = attrs.getInt("block_size", 0).value_or(0);
    if (q.bits != 2 && q.bits != 4 && q.bits != 8)
        return ("bits is " + std::to_string(q.bits) +
                ": MatMulNBits takes 2, 4 "
                "or 8");
    if (q.blockSize < 16 || (q.blockSize & (q.blockSize - 1)) != 0)
        return ("block_size is " + std::to_string(q.blockSize) +
                ": it must be a power of 2, at least 16");
    if (q.k <= 0 || q.n <= 0)
        return ("attributes K and N must be positive");
    const int zeroInput = inputAt(spec, 3);
    const int gIdx = inputAt(spec, 4);
    const int biasInput = inputAt(spec, 5);
    if (gIdx >= 0)
        return ("g_idx (rows of K in other blocks than their own) is not supported");
    const TensorType& a = spec.inputs[0];
    if (!isFloatingPoint(a.dtype) || a.rank() < 1 || a.shape.back() != q.k)
        return ("A is " + a.toShortString() + ", not floating point [..., " + std::to_string(q.k) +
                "] (K)");
    q.rows = a.elementCount() / q.k;
    q.blocks = (q.k + q.blockSize - 1) / q.blockSize;
    q.blobBytes = q.blockSize * q.bits / 8;
    const TensorType& b = spec.inputs[1];
    if (b.dtype != DType::UInt8 || b.elementCount() != q.n * q.blocks * q.blobBytes)
        return ("B is " + b.toShortString() + ", not uint8 [" + std::to_string(q.n) + ", " +
                std::to_string(q.blocks) + ", " + std::to_string(q.blobBytes) +
                "] (N, K's blocks of " + std::to_string(q.blockSize) + ", their bytes)");
    const TensorType& scales = spec.inputs[2];
    if (scales.dtype != a.dtype || scales.elementCount() != q.n * q.blocks)
        return ("scales is " + scales.toShortString() + ": its " +
                std::to_string(scales.elementCount()) + " scales do not fit B's " +
                std::to_string(q.n * q.blocks) + " blocks (N " + std::to_string(q.n) + " x " +
                std::to_string(q.blocks) + " blocks of " + std::to_string(q.blockSize) +
                " along K " + std::to_string(q.k) + ")");
    if (zeroInput >= 0) {
        const TensorType& zeros = spec.inputs[static_cast<std::size_t>(zeroInput)];
        const std::int64_t perByte = 8 / q.bits;
        const std::int64_t packed = q.n * ((q.blocks + perByte - 1) / perByte);
        q.zeros = zeroInput;
        q.packedZeros = zeros.dtype == DType::UInt8;
        const bool fits = q.packedZeros
                              ? zeros.elementCount() == packed
                              : zeros.dtype == a.dtype && zeros.elementCount() == q.n * q.blocks;
        if (!fits)
            return ("zero_points is " + zeros.toShortString() + ": not uint8 [" +
                    std::to_string(packed) + "] (packed) nor " + std::string(dtypeName(a.dtype)) +
                    " [" + std::to_string(q.n * q.blocks) + "] for B's blocks");
    }
    if (biasInput >= 0) {
        const TensorType& bias = spec.inputs[static_cast<std::size_t>(biasInput)];
        if (bias.dtype != a.dtype || bias.elementCount() != q.n)
            return ("bias is " + bias.toShortString() + ", not " + std::string(dtypeName(a.dtype)) +
                    " [" + std::to_string(q.n) + "]");
        q.bias = biasInput;
    }
    if (spec.outputs.size() != 1 || spec.outputs[0].elementCount() != q.rows * q.n)
        return ("the output is not A's rows by N");
    return std::nullopt;
}

Problem readSoftmax(const KernelSpec& spec, Softmax* softmax) {
    const std::string& op = spec.node->op->name;
    const Dims& in = spec.inputs[0].shape;
    const int rank = std::max<int>(1, static_cast<int>(in.size()));
    const bool legacyOnnx = spec.node->op->dialect == OpDialect::Onnx && spec.onnxOpset < 13;
    const std::int64_t fallbackAxis = legacyOnnx ? 1 : -1;
    const int axis =
        normalizeAxis(spec.node->attrs.getInt("axis", fallbackAxis).value_or(fallbackAxis), rank);
    if (axis < 0)
        return "axis out of range";
    const Dims dims = in.empty() ? Dims{1} : in;
    const auto a = static_cast<std::size_t>(axis);
    // ONNX before opset 13 normalises over everything from `axis` on, as one 2-D row.
    softmax->outer = product(dims, 0, a);
    softmax->channels = legacyOnnx ? product(dims, a) : dims[a];
    softmax->inner = legacyOnnx ? 1 : product(dims, a + 1);
    softmax->log = op == "nn.log_softmax" || op == "LogSoftmax";
    return std::nullopt;
}

/// An integer list from an input: the constant's bytes if it is one, else std::nullopt.
std::optional<Dims> constantInts(const KernelSpec& spec, std::size_t input) {
    if (input >= spec.constantData.size() || !spec.constantData[input])
        return std::nullopt;
    const TensorType& type = spec.inputs[input];
    const TensorData& data = *spec.constantData[input];
    const std::int64_t count = type.elementCount();
    if (static_cast<std::int64_t>(data.size()) < count * dtypeSize(type.dtype))
        return std::nullopt;
    Dims values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
        values[static_cast<std::size_t>(i)] =
            readIndex(reinterpret_cast<const std::byte*>(data.data()), type.dtype, i);
    return values;
}

Problem readReduceFunctor(const KernelSpec& spec, functors::Reduce* op, std::int64_t* rows) {
    const Dims& in = spec.inputs[0].shape;
    Dims kept;
    std::int64_t count = 1;
    if (auto error = readReduction(spec, &kept, &count))
        return error;
    if (product(kept) != spec.outputs[0].elementCount())
        return "the reduced shape does not match the output type";
    op->elem = elemOf(spec.inputs[0].dtype);
    op->outElem = elemOf(spec.outputs[0].dtype);
    op->fn = spec.node->op->kernel.reduce();
    op->lastIndex = spec.node->attrs.getInt("select_last_index", 0).value_or(0) != 0;
    op->count = count;
    const Dims own = contiguousStrides(in);
    Dims keptDims, keptStrides, reducedDims, reducedStrides;
    for (std::size_t d = 0; d < in.size(); ++d) {
        if (kept[d] == in[d] && !(in[d] == 1 && count == 0)) {
            keptDims.push_back(in[d]);
            keptStrides.push_back(own[d]);
        } else {
            reducedDims.push_back(in[d]);
            reducedStrides.push_back(own[d]);
        }
    }
    if (!toFunctorShape(keptDims, &op->kept) || !toFunctorShape(reducedDims, &op->reduced))
        return kFunctorRankError;
    op->keptStrides = toFunctorStrides(keptStrides);
    op->reducedStrides = toFunctorStrides(reducedStrides);
    *rows = product(kept);
    return std::nullopt;
}

Problem readUnaryParameters(const KernelSpec& spec, double* a, double* b) {
    *a = *b = 0;
    const Attrs& attrs = spec.node->attrs;
    switch (spec.node->op->kernel.unary()) {
    case UnaryFn::LeakyRelu:
        *a = attrs.getFloat("alpha", 0.01).value_or(0.01);
        return std::nullopt;
    case UnaryFn::HardSigmoid:
        *a = attrs.getFloat("alpha", 0.2).value_or(0.2);
        *b = attrs.getFloat("beta", 0.5).value_or(0.5);
        return std::nullopt;
    case UnaryFn::Elu:
    case UnaryFn::Celu:
    case UnaryFn::ThresholdedRelu:
        *a = attrs.getFloat("alpha", 1.0).value_or(1.0);
        return std::nullopt;
    case UnaryFn::Selu:
        *a = attrs.getFloat("alpha", 1.67326319217681884765625).value_or(1.6732632);
        *b = attrs.getFloat("gamma", 1.05070102214813232421875).value_or(1.0507010);
        return std::nullopt;
    case UnaryFn::Shrink:
        *a = attrs.getFloat("lambd", 0.5).value_or(0.5);
        *b = attrs.getFloat("bias", 0.0).value_or(0.0);
        return std::nullopt;
    case UnaryFn::IsInf:
        *a = static_cast<double>(attrs.getInt("detect_positive", 1).value_or(1));
        *b = static_cast<double>(attrs.getInt("detect_negative", 1).value_or(1));
        return std::nullopt;
    case UnaryFn::Clip:
        break;
    default:
        return std::nullopt;
    }
    if (spec.node->op->dialect == OpDialect::Relay) {
        *a = attrs.getFloat("a_min", -INFINITY).value_or(-INFINITY);
        *b = attrs.getFloat("a_max", INFINITY).value_or(INFINITY);
        return std::nullopt;
    }
    *a = attrs.getFloat("min", -INFINITY).value_or(-INFINITY);
    *b = attrs.getFloat("max", INFINITY).value_or(INFINITY);
    for (int position = 1; position < 3; ++position) {
        const int at = inputAt(spec, position);
        if (at < 0)
            continue;
        const auto k = static_cast<std::size_t>(at);
        if (spec.inputs[k].elementCount() != 1)
            return "the min and max inputs must be scalars";
        if (k >= spec.constantData.size() || !spec.constantData[k])
            continue; // read at run time (clipInputs)
        (position == 1 ? *a : *b) =
            loadAsDouble(reinterpret_cast<const std::byte*>(spec.constantData[k]->data()),
                         spec.inputs[k].dtype, 0);
    }
    return std::nullopt;
}

Problem readUnary(const KernelSpec& spec, Unary* unary) {
    unary->fn = spec.node->op->kernel.unary();
    if (auto error = readUnaryParameters(spec, &unary->a, &unary->b))
        return error;
    unary->dtype = spec.inputs[0].dtype;
    unary->outType = spec.outputs[0].dtype;
    unary->predicate = unary->fn == UnaryFn::IsNaN || unary->fn == UnaryFn::IsInf;
    if (unary->outType != (unary->predicate ? DType::Bool : unary->dtype))
        return "unexpected output type " + std::string(dtypeName(unary->outType));
    std::tie(unary->aInput, unary->bInput) = clipInputs(spec);
    return std::nullopt;
}

Problem checkCopy(const KernelSpec& spec) {
    if (spec.node->op->name != "Dropout" || spec.node->op->dialect != OpDialect::Onnx)
        return std::nullopt;
    const int training = inputAt(spec, 2);
    if (training < 0)
        return std::nullopt;
    const auto t = static_cast<std::size_t>(training);
    const bool constant = t < spec.constantData.size() && spec.constantData[t];
    if (constant && loadAsDouble(reinterpret_cast<const std::byte*>(spec.constantData[t]->data()),
                                 spec.inputs[t].dtype, 0) == 0)
        return std::nullopt;
    if (const int ratio = inputAt(spec, 1); ratio >= 0) {
        const auto r = static_cast<std::size_t>(ratio);
        if (r < spec.constantData.size() && spec.constantData[r] &&
            loadAsDouble(reinterpret_cast<const std::byte*>(spec.constantData[r]->data()),
                         spec.inputs[r].dtype, 0) == 0)
            return std::nullopt;
    }
    return constant ? "training-mode Dropout drops random elements, which is not supported; "
                      "export the model in inference mode (model.eval())"
                    : "the training_mode input is not a constant: training-mode Dropout drops "
                      "random elements, which is not supported";
}

int inputAt(const KernelSpec& spec, int position) {
    const int count = static_cast<int>(spec.inputs.size());
    const auto positions = spec.node->attrs.getInts(kInputPositionsAttr, {});
    if (!positions || positions->empty())
        return position < count ? position : -1;
    for (int k = 0; k < count && k < static_cast<int>(positions->size()); ++k) {
        if ((*positions)[static_cast<std::size_t>(k)] == position)
            return k;
    }
    return -1;
}

BinaryFn binaryFunction(const KernelSpec& spec) {
    const BinaryFn fn = spec.node->op->kernel.binary();
    if (fn == BinaryFn::Mod && spec.node->op->dialect == OpDialect::Onnx &&
        spec.node->attrs.getInt("fmod", 0).value_or(0) == 0)
        return BinaryFn::FloorMod;
    if (fn == BinaryFn::ShiftLeft &&
        spec.node->attrs.getString("direction", "LEFT").value_or("LEFT") == "RIGHT")
        return BinaryFn::ShiftRight;
    return fn;
}

std::pair<int, int> clipInputs(const KernelSpec& spec) {
    std::pair<int, int> inputs{-1, -1};
    if (spec.node->op->kernel.family != KernelFamily::Unary ||
        spec.node->op->kernel.unary() != UnaryFn::Clip || spec.node->op->dialect != OpDialect::Onnx)
        return inputs;
    for (int position = 1; position < 3; ++position) {
        const int k = inputAt(spec, position);
        if (k >= 0 && (static_cast<std::size_t>(k) >= spec.constantData.size() ||
                       !spec.constantData[static_cast<std::size_t>(k)]))
            (position == 1 ? inputs.first : inputs.second) = k;
    }
    return inputs;
}

double fillValue(const KernelSpec& spec) {
    if (spec.node->op->name == "ones_like")
        return 1;
    return spec.node->attrs.getFloat("value", 0).value_or(0);
}

Dims binaryOperandShape(const KernelSpec& spec, std::size_t i) {
    if (spec.node->op->name != "nn.bias_add" || i != 1)
        return spec.inputs[i].shape;
    const int rank = spec.inputs[0].rank();
    const int axis = normalizeAxis(spec.node->attrs.getInt("axis", 1).value_or(1), rank);
    Dims shape(static_cast<std::size_t>(rank), 1);
    if (axis >= 0)
        shape[static_cast<std::size_t>(axis)] = spec.inputs[1].elementCount();
    return shape;
}

Problem checkBroadcast(const KernelSpec& spec) {
    const KernelFamily family = spec.node->op->kernel.family;
    if (spec.outputs.empty() || (family != KernelFamily::Binary && family != KernelFamily::Where &&
                                 family != KernelFamily::Expand && family != KernelFamily::Mean))
        return std::nullopt;
    const Dims& out = spec.outputs[0].shape;
    const std::size_t operands = family == KernelFamily::Expand ? 1 : spec.inputs.size();
    for (std::size_t i = 0; i < operands && i < spec.inputs.size(); ++i) {
        const Dims shape =
            family == KernelFamily::Binary ? binaryOperandShape(spec, i) : spec.inputs[i].shape;
        bool fits = shape.size() <= out.size();
        for (std::size_t d = 0; fits && d < shape.size(); ++d) {
            const std::int64_t o = out[out.size() - shape.size() + d];
            fits = shape[d] == o || shape[d] == 1;
        }
        if (!fits)
            return "input " + std::to_string(i) + " (" +
                   TensorType{shape, spec.inputs[i].dtype}.toShortString() +
                   ") does not broadcast to the output (" + spec.outputs[0].toShortString() + ")";
    }
    return std::nullopt;
}

Problem readTransposePerm(const KernelSpec& spec, Dims* perm) {
    const int rank = spec.inputs[0].rank();
    perm->clear();
    for (const char* name : {"axes", "perm"}) {
        if (auto value = spec.node->attrs.getInts(name, {}); value && !value->empty())
            *perm = *value;
    }
    if (perm->empty()) {
        for (int i = rank - 1; i >= 0; --i)
            perm->push_back(i);
    }
    if (static_cast<int>(perm->size()) != rank)
        return "the permutation does not match the rank";
    for (std::int64_t& p : *perm) {
        const int axis = normalizeAxis(p, rank);
        if (axis < 0)
            return "axis " + std::to_string(p) + " out of range";
        p = axis;
    }
    return std::nullopt;
}

Problem readTranspose(const KernelSpec& spec, Dims* strides) {
    Dims perm;
    if (auto problem = readTransposePerm(spec, &perm))
        return problem;
    const Dims own = contiguousStrides(spec.inputs[0].shape);
    strides->clear();
    for (std::int64_t p : perm)
        strides->push_back(own[static_cast<std::size_t>(p)]);
    return std::nullopt;
}

namespace {

/// Start index of a slice along a dimension of length `dim` (numpy clamping rules).
std::int64_t sliceStart(std::int64_t begin, std::int64_t dim, std::int64_t step) {
    if (begin < 0)
        begin += dim;
    return step > 0 ? std::clamp<std::int64_t>(begin, 0, dim)
                    : std::clamp<std::int64_t>(begin, -1, dim - 1);
}

} // namespace

Problem readSlice(const KernelSpec& spec, std::int64_t* base, Dims* strides) {
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    Dims starts(static_cast<std::size_t>(rank), 0), steps(static_cast<std::size_t>(rank), 1);
    Dims begin, axes, stride;
    if (spec.node->op->dialect == OpDialect::Relay) {
        begin = spec.node->attrs.getInts("begin", {}).value_or(Dims{});
        stride = spec.node->attrs.getInts("strides", {}).value_or(Dims{});
        axes = spec.node->attrs.getInts("axes", {}).value_or(Dims{});
    } else {
        // Slice(data, starts, ends, axes?, steps?): the bounds must be constants.
        auto s = constantInts(spec, 1);
        if (!s)
            return "the starts input must be a constant";
        begin = *s;
        if (const int at = inputAt(spec, 3); at >= 0) {
            auto a = constantInts(spec, static_cast<std::size_t>(at));
            if (!a)
                return "the axes input must be a constant";
            axes = *a;
        }
        if (const int at = inputAt(spec, 4); at >= 0) {
            auto st = constantInts(spec, static_cast<std::size_t>(at));
            if (!st)
                return "the steps input must be a constant";
            stride = *st;
        }
    }
    if (axes.empty()) {
        for (std::size_t i = 0; i < begin.size(); ++i)
            axes.push_back(static_cast<std::int64_t>(i));
    }
    for (std::size_t i = 0; i < axes.size() && i < begin.size(); ++i) {
        const int axis = normalizeAxis(axes[i], rank);
        if (axis < 0)
            return "axis " + std::to_string(axes[i]) + " out of range";
        const std::int64_t step =
            i < stride.size() ? stride[i] : (stride.size() == 1 ? stride[0] : 1);
        if (step == 0)
            return "a step of 0";
        steps[static_cast<std::size_t>(axis)] = step;
        starts[static_cast<std::size_t>(axis)] =
            sliceStart(begin[i], in[static_cast<std::size_t>(axis)], step);
    }
    const Dims own = contiguousStrides(in);
    *base = 0;
    strides->assign(static_cast<std::size_t>(rank), 0);
    const Dims& out = spec.outputs[0].shape;
    if (static_cast<int>(out.size()) != rank)
        return "the output rank differs from the input's";
    for (std::size_t d = 0; d < static_cast<std::size_t>(rank); ++d) {
        if (out[d] > 0 &&
            (starts[d] < 0 || starts[d] >= in[d] || starts[d] + (out[d] - 1) * steps[d] < 0 ||
             starts[d] + (out[d] - 1) * steps[d] >= in[d]))
            return "the slice does not fit the input";
        *base += starts[d] * own[d];
        (*strides)[d] = steps[d] * own[d];
    }
    return std::nullopt;
}

Problem readReduction(const KernelSpec& spec, Dims* kept, std::int64_t* count) {
    const Attrs& attrs = spec.node->attrs;
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    std::optional<Dims> axes;
    bool all = false;
    if (spec.node->op->dialect == OpDialect::Relay) {
        axes = attrs.getInts("axis", {});
        all = !attrs.find("axis") || std::holds_alternative<std::monostate>(*attrs.find("axis")) ||
              (axes && axes->empty());
    } else if (spec.node->op->kernel.family == KernelFamily::Reduce &&
               (spec.node->op->kernel.reduce() == ReduceFn::ArgMax ||
                spec.node->op->kernel.reduce() == ReduceFn::ArgMin)) {
        axes = Dims{attrs.getInt("axis", 0).value_or(0)};
    } else {
        if (spec.inputs.size() > 1) {
            axes = constantInts(spec, 1);
            if (!axes)
                return "the axes input must be a constant";
        } else {
            axes = attrs.getInts("axes", {});
        }
        if (axes && axes->empty())
            all = attrs.getInt("noop_with_empty_axes", 0).value_or(0) == 0;
    }
    if (!axes)
        return "malformed axes";
    for (std::int64_t axis : *axes) {
        const int a = normalizeAxis(axis, rank);
        if (a < 0)
            return "axis " + std::to_string(axis) + " out of range";
        reduced[static_cast<std::size_t>(a)] = true;
    }
    if (all)
        std::fill(reduced.begin(), reduced.end(), true);
    if (attrs.getBool("exclude", false).value_or(false) && !all)
        reduced.flip();
    *kept = in;
    *count = 1;
    for (int i = 0; i < rank; ++i) {
        if (reduced[static_cast<std::size_t>(i)]) {
            *count *= (*kept)[static_cast<std::size_t>(i)];
            (*kept)[static_cast<std::size_t>(i)] = 1;
        }
    }
    return std::nullopt;
}

Problem readPad(const KernelSpec& spec, Dims* before, std::string* mode) {
    const std::size_t rank = spec.inputs[0].shape.size();
    if (spec.outputs[0].shape.size() != rank)
        return "the output rank differs from the input's";
    Dims pads;
    if (auto attr = spec.node->attrs.getInts("pads", {}); attr && !attr->empty()) {
        pads = *attr;
    } else {
        auto constant = constantInts(spec, 1);
        if (!constant)
            return "the pads input must be a constant";
        pads = *constant;
    }
    Dims axes;
    if (const int at = inputAt(spec, 3); at >= 0) {
        auto constant = constantInts(spec, static_cast<std::size_t>(at));
        if (!constant)
            return "the axes input must be a constant";
        axes = *constant;
    } else {
        for (std::size_t d = 0; d < rank; ++d)
            axes.push_back(static_cast<std::int64_t>(d));
    }
    if (pads.size() != 2 * axes.size())
        return "pads must have two entries per axis";
    before->assign(rank, 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const int axis = normalizeAxis(axes[i], static_cast<int>(rank));
        if (axis < 0)
            return "axis out of range";
        (*before)[static_cast<std::size_t>(axis)] = pads[i];
    }
    *mode = spec.node->attrs.getString("mode", "constant").value_or("constant");
    if (*mode != "constant" && *mode != "edge" && *mode != "reflect")
        return "unknown pad mode '" + *mode + "'";
    return std::nullopt;
}

std::vector<std::pair<std::int64_t, std::int64_t>> batchOffsets(const Dims& a, const Dims& b,
                                                                const Dims& out) {
    const Dims sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
    std::vector<std::pair<std::int64_t, std::int64_t>> offsets;
    const std::int64_t count = product(out);
    Dims index(out.size(), 0);
    for (std::int64_t i = 0; i < count; ++i) {
        std::int64_t oa = 0, ob = 0;
        for (std::size_t d = 0; d < out.size(); ++d) {
            oa += index[d] * sa[d];
            ob += index[d] * sb[d];
        }
        offsets.emplace_back(oa, ob);
        for (std::size_t d = out.size(); d-- > 0;) {
            if (++index[d] < out[d])
                break;
            index[d] = 0;
        }
    }
    return offsets;
}

Dims broadcastShapes(const Dims& a, const Dims& b) {
    Dims out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
        const std::int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Problem readConcatAxis(const KernelSpec& spec, int* axis) {
    *axis = normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0),
                          static_cast<int>(spec.outputs[0].shape.size()));
    if (*axis < 0)
        return std::string("axis out of range");
    return std::nullopt;
}

Problem readSplitAxis(const KernelSpec& spec, int* axis) {
    const Dims& in = spec.inputs[0].shape;
    *axis =
        normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0), static_cast<int>(in.size()));
    if (*axis < 0)
        return std::string("axis out of range");
    std::int64_t total = 0;
    for (const TensorType& output : spec.outputs)
        total +=
            output.shape.size() == in.size() ? output.shape[static_cast<std::size_t>(*axis)] : -1;
    if (total != in[static_cast<std::size_t>(*axis)])
        return std::string("the outputs do not add up to the input");
    return std::nullopt;
}

Problem readTile(const KernelSpec& spec, Dims* shape, Dims* strides) {
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    if (in.size() != out.size())
        return std::string("the output rank differs from the input's");
    const Dims own = contiguousStrides(in);
    shape->clear();
    strides->clear();
    for (std::size_t d = 0; d < in.size(); ++d) {
        if (in[d] == 0 || out[d] % in[d] != 0)
            return std::string("the output is not a whole number of tiles");
        shape->push_back(out[d] / in[d]);
        strides->push_back(0);
        shape->push_back(in[d]);
        strides->push_back(own[d]);
    }
    return std::nullopt;
}

Problem readGather(const KernelSpec& spec, Gather* gather) {
    const Dims& data = spec.inputs[0].shape;
    const bool relay = spec.node->op->dialect == OpDialect::Relay;
    const AttrValue* axis = spec.node->attrs.find("axis");
    gather->flat = relay && (!axis || std::holds_alternative<std::monostate>(*axis));
    gather->axis = 0;
    if (!gather->flat) {
        gather->axis = normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0),
                                     static_cast<int>(data.size()));
        if (gather->axis < 0)
            return std::string("axis out of range");
    }
    const auto at = static_cast<std::size_t>(gather->axis);
    gather->outer = gather->flat ? 1 : product(data, 0, at);
    gather->dim = gather->flat ? product(data) : data[at];
    gather->inner = gather->flat ? 1 : product(data, at + 1);
    gather->count = spec.inputs[1].elementCount();
    const std::string mode =
        relay ? spec.node->attrs.getString("mode", "clip").value_or("clip") : "raise";
    gather->mode = mode == "clip"   ? Gather::Mode::Clip
                   : mode == "wrap" ? Gather::Mode::Wrap
                                    : Gather::Mode::Fail;
    return std::nullopt;
}

} // namespace placer::geometry
