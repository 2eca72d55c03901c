// The functors of the layer operators that are not plain indexing (RNN/GRU/LSTM, MaxUnpool,
// Det, the quantised matrix products and convolutions, RoiAlign, pooling in any element type):
// like kernels/IndexingFunctors.h, plain C++ that nvcc compiles too, run by both backends as
// kernels/IndexingPlan.h says.
#pragma once

#include "kernels/IndexingFunctors.h"

namespace placer::functors {

/// An activation of a recurrent layer (ONNX's names), with its alpha and beta.
struct Activation {
    int fn = 0; ///< 0 Sigmoid, 1 Tanh, 2 Relu, 3 HardSigmoid, 4 LeakyRelu, 5 ThresholdedRelu,
                ///< 6 ScaledTanh, 7 Elu, 8 Softsign, 9 Softplus, 10 Affine
    double alpha = 0, beta = 0;
    PLACER_HD double operator()(double x) const {
        switch (fn) {
        case 1:
            return tanh(x);
        case 2:
            return x > 0 ? x : 0;
        case 3: {
            const double t = alpha * x + beta;
            return t < 0 ? 0 : (t > 1 ? 1 : t);
        }
        case 4:
            return x >= 0 ? x : alpha * x;
        case 5:
            return x > alpha ? x : 0;
        case 6:
            return alpha * tanh(beta * x);
        case 7:
            return x >= 0 ? x : alpha * (exp(x) - 1);
        case 8:
            return x / (1 + (x < 0 ? -x : x));
        case 9:
            return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
        case 10:
            return alpha * x + beta;
        default:
            return 1 / (1 + exp(-x));
        }
    }
};

/// One thread's vector in a step's scratch memory (IndexingStep::scratchBytes): its element k
/// lies at base[k * stride], the threads' vectors interleaved so that a warp's threads touch
/// neighbouring words. An empty vector (no base) stands for "absent".
template <typename T> struct ScratchVector {
    T* base = nullptr;
    i64 stride = 1;
    PLACER_HD T& operator[](i64 k) const { return base[k * stride]; }
    PLACER_HD explicit operator bool() const { return base != nullptr; }
};

/// RNN, GRU and LSTM: one thread per (direction, batch entry) runs the sequence step by step.
/// Its state (h, c and their next values, GRU's reset gate) lives in the step's scratch memory,
/// not in per-thread local memory, which a GPU's driver would reserve for every thread it can
/// hold (kStateVectors * hidden floats per thread, about 1.4 GB on an H100 at hidden 256).
struct Recurrent {
    static constexpr int kStateVectors = 5;
    Io io;
    float* scratch = nullptr; ///< kStateVectors * hidden floats per (direction, batch entry)
    Elem elem = Elem::F32, lengthElem = Elem::I32;
    int kind = 0; ///< 0 RNN, 1 GRU, 2 LSTM
    i64 steps = 1, batch = 1, inputSize = 1, hidden = 1;
    int directions = 1;
    bool reverse = false;    ///< the single direction runs backwards
    bool batchFirst = false; ///< layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden]
    bool linearBeforeReset = false, inputForget = false;
    double clip = 0; ///< 0: no clipping
    // Inputs by ONNX position (-1 when absent): X 0, W 1, R 2, B 3, sequence_lens 4,
    // initial_h 5, initial_c 6, P 7.
    int bias = -1, lengths = -1, initialH = -1, initialC = -1, peepholes = -1;
    bool outY = false, outH = false, outC = false;
    Activation act[6]; ///< per direction: f, g, h (LSTM), f, g (GRU), f (RNN)

    PLACER_HD double x(i64 t, i64 b, i64 k) const {
        return loadAny(io.in[0], elem,
                       (batchFirst ? b * steps + t : t * batch + b) * inputSize + k);
    }
    PLACER_HD i64 yOffset(i64 t, int d, i64 b) const {
        return batchFirst ? ((b * steps + t) * directions + d) * hidden
                          : ((t * directions + d) * batch + b) * hidden;
    }
    /// initial_h, initial_c, Y_h and Y_c: [dirs, batch, hidden], or [batch, dirs, hidden] in
    /// layout 1.
    PLACER_HD i64 stateOffset(int d, i64 b) const {
        return (batchFirst ? b * directions + d : d * batch + b) * hidden;
    }
    PLACER_HD double clipped(double v) const {
        return clip > 0 ? (v < -clip ? -clip : (v > clip ? clip : v)) : v;
    }
    /// The scratch memory a step over every (direction, batch entry) needs.
    std::int64_t scratchBytes() const {
        return static_cast<std::int64_t>(sizeof(float)) * kStateVectors * hidden * directions *
               batch;
    }
    /// State vector `v` of thread `line`.
    PLACER_HD ScratchVector<float> state(int v, i64 line) const {
        const i64 lines = directions * batch;
        return {scratch + v * hidden * lines + line, lines};
    }
    /// W x + R h + Wb + Rb for row `row` of gate `gate` (h from `state`, or r .* h for GRU).
    PLACER_HD double gateInput(int d, i64 t, i64 b, int gates, int gate, i64 j,
                               ScratchVector<float> state, ScratchVector<float> scale,
                               bool withRecurrent) const {
        const i64 row = gate * hidden + j;
        double acc = 0;
        for (i64 k = 0; k < inputSize; ++k)
            acc += x(t, b, k) * loadAny(io.in[1], elem, (d * gates * hidden + row) * inputSize + k);
        if (withRecurrent)
            for (i64 k = 0; k < hidden; ++k)
                acc += (scale ? scale[k] : 1.0f) * state[k] *
                       loadAny(io.in[2], elem, (d * gates * hidden + row) * hidden + k);
        if (bias >= 0) {
            acc += loadAny(io.in[bias], elem, d * 2 * gates * hidden + row);
            if (withRecurrent)
                acc += loadAny(io.in[bias], elem, d * 2 * gates * hidden + gates * hidden + row);
        }
        return acc;
    }
    PLACER_HD double recurrentOnly(int d, int gates, int gate, i64 j,
                                   ScratchVector<float> state) const {
        const i64 row = gate * hidden + j;
        double acc = 0;
        for (i64 k = 0; k < hidden; ++k)
            acc += state[k] * loadAny(io.in[2], elem, (d * gates * hidden + row) * hidden + k);
        if (bias >= 0)
            acc += loadAny(io.in[bias], elem, d * 2 * gates * hidden + gates * hidden + row);
        return acc;
    }

    PLACER_HD void operator()(i64 line) const {
        const int d = static_cast<int>(line / batch);
        const i64 b = line % batch;
        const bool backwards = directions == 2 ? d == 1 : reverse;
        const int gates = kind == 2 ? 4 : (kind == 1 ? 3 : 1);
        const Activation* a = act + d * (kind == 2 ? 3 : (kind == 1 ? 2 : 1));
        const ScratchVector<float> h = state(0, line), c = state(1, line), hn = state(2, line),
                                   cn = state(3, line), r = state(4, line), none{};
        for (i64 j = 0; j < hidden; ++j) {
            h[j] = initialH >= 0
                       ? static_cast<float>(loadAny(io.in[initialH], elem, stateOffset(d, b) + j))
                       : 0.0f;
            c[j] = initialC >= 0
                       ? static_cast<float>(loadAny(io.in[initialC], elem, stateOffset(d, b) + j))
                       : 0.0f;
        }
        i64 length = steps;
        if (lengths >= 0) {
            length = loadIndex(io.in[lengths], lengthElem, b);
            length = length < 0 ? 0 : (length > steps ? steps : length);
        }
        for (i64 s = 0; s < length; ++s) {
            const i64 t = backwards ? length - 1 - s : s;
            if (kind == 1) {
                for (i64 j = 0; j < hidden; ++j)
                    r[j] = static_cast<float>(
                        a[0](clipped(gateInput(d, t, b, gates, 1, j, h, none, true))));
            }
            for (i64 j = 0; j < hidden; ++j) {
                if (kind == 0) {
                    hn[j] = static_cast<float>(
                        a[0](clipped(gateInput(d, t, b, gates, 0, j, h, none, true))));
                } else if (kind == 1) {
                    const double z = a[0](clipped(gateInput(d, t, b, gates, 0, j, h, none, true)));
                    double candidate;
                    if (linearBeforeReset)
                        candidate = gateInput(d, t, b, gates, 2, j, h, none, false) +
                                    r[j] * recurrentOnly(d, gates, 2, j, h);
                    else
                        candidate = gateInput(d, t, b, gates, 2, j, h, r, true);
                    const double ht = a[1](clipped(candidate));
                    hn[j] = static_cast<float>((1 - z) * ht + z * h[j]);
                } else {
                    double pi = 0, po = 0, pf = 0;
                    if (peepholes >= 0) {
                        pi = loadAny(io.in[peepholes], elem, d * 3 * hidden + j);
                        po = loadAny(io.in[peepholes], elem, d * 3 * hidden + hidden + j);
                        pf = loadAny(io.in[peepholes], elem, d * 3 * hidden + 2 * hidden + j);
                    }
                    const double i =
                        a[0](clipped(gateInput(d, t, b, gates, 0, j, h, none, true) + pi * c[j]));
                    const double f =
                        inputForget ? 1 - i
                                    : a[0](clipped(gateInput(d, t, b, gates, 2, j, h, none, true) +
                                                   pf * c[j]));
                    const double g = a[1](clipped(gateInput(d, t, b, gates, 3, j, h, none, true)));
                    const double cell = f * c[j] + i * g;
                    const double o =
                        a[0](clipped(gateInput(d, t, b, gates, 1, j, h, none, true) + po * cell));
                    cn[j] = static_cast<float>(cell);
                    hn[j] = static_cast<float>(o * a[2](cell));
                }
            }
            for (i64 j = 0; j < hidden; ++j) {
                h[j] = hn[j];
                if (kind == 2)
                    c[j] = cn[j];
                if (outY)
                    storeAny(io.out[0], elem, yOffset(t, d, b) + j, h[j]);
            }
        }
        for (i64 t = length; t < steps && outY; ++t)
            for (i64 j = 0; j < hidden; ++j)
                storeAny(io.out[0], elem, yOffset(t, d, b) + j, 0.0);
        for (i64 j = 0; j < hidden; ++j) {
            if (outH)
                storeAny(io.out[1], elem, stateOffset(d, b) + j, h[j]);
            if (outC)
                storeAny(io.out[2], elem, stateOffset(d, b) + j, c[j]);
        }
    }
};

/// out0 = 0 (the first step of MaxUnpool).
struct ZeroOutput {
    Io io;
    Elem elem = Elem::F32;
    PLACER_HD void operator()(i64 i) const { storeAny(io.out[0], elem, i, 0.0); }
};

/// MaxUnpool after ZeroOutput: each input element goes where its index (into the output's
/// elements per batch and channel) says; one thread, in order, as the operator defines.
struct MaxUnpool {
    Io io;
    int elementSize = 4;
    Elem indexElem = Elem::I64;
    i64 count = 0;
    i64 outCount = 1; ///< output elements in all
    PLACER_HD void operator()(i64 i) const {
        if (i != 0)
            return;
        for (i64 j = 0; j < count; ++j) {
            const i64 to = loadIndex(io.in[1], indexElem, j);
            if (to >= 0 && to < outCount)
                copyElement(io.out[0], to, io.in[0], j, elementSize);
        }
    }
};

/// Det of each n x n matrix: Gaussian elimination with partial pivoting in double, one thread
/// per matrix, each matrix's copy in the step's scratch memory (interleaved by matrix).
struct Det {
    Io io;
    double* scratch = nullptr; ///< n * n doubles per matrix
    Elem elem = Elem::F32;
    i64 n = 1;
    i64 matrices = 1;
    std::int64_t scratchBytes() const {
        return static_cast<std::int64_t>(sizeof(double)) * n * n * matrices;
    }
    PLACER_HD void operator()(i64 m) const {
        const ScratchVector<double> a{scratch + m, matrices};
        for (i64 k = 0; k < n * n; ++k)
            a[k] = loadAny(io.in[0], elem, m * n * n + k);
        double det = 1;
        for (i64 c = 0; c < n; ++c) {
            i64 pivot = c;
            for (i64 r = c + 1; r < n; ++r) {
                const double v = a[r * n + c] < 0 ? -a[r * n + c] : a[r * n + c];
                const double p = a[pivot * n + c] < 0 ? -a[pivot * n + c] : a[pivot * n + c];
                if (v > p)
                    pivot = r;
            }
            if (a[pivot * n + c] == 0) {
                det = 0;
                break;
            }
            if (pivot != c) {
                for (i64 k = 0; k < n; ++k) {
                    const double t = a[c * n + k];
                    a[c * n + k] = a[pivot * n + k];
                    a[pivot * n + k] = t;
                }
                det = -det;
            }
            det *= a[c * n + c];
            for (i64 r = c + 1; r < n; ++r) {
                const double f = a[r * n + c] / a[c * n + c];
                for (i64 k = c; k < n; ++k)
                    a[r * n + k] -= f * a[c * n + k];
            }
        }
        storeAny(io.out[0], elem, m, det);
    }
};

/// A zero point or scale: one value, or one per row (or column, or output channel).
struct QuantParam {
    int input = -1; ///< the node's input holding it; -1: absent (0 for zero points, 1 for scales)
    Elem elem = Elem::F32;
    bool perIndex = false;
    PLACER_HD double at(const Io& io, i64 index, double fallback) const {
        return input < 0 ? fallback : loadAny(io.in[input], elem, perIndex ? index : 0);
    }
};

/// Requantizes an accumulator: round(acc * scale / yScale) + yZero, saturated to int8 or uint8.
PLACER_HD inline double requantize(double acc, double scale, double yScale, double yZero,
                                   Elem out) {
    double q = nearbyint(acc * scale / yScale) + yZero;
    const double lo = out == Elem::I8 ? -128.0 : 0.0, hi = out == Elem::I8 ? 127.0 : 255.0;
    return q < lo ? lo : (q > hi ? hi : q);
}

/// MatMulInteger and QLinearMatMul: (A - a_zero) x (B - b_zero) in exact integer arithmetic,
/// then for QLinearMatMul requantized with a_scale * b_scale / y_scale and y_zero.
struct QuantizedMatmul {
    Io io;
    int a = 0, b = 1;
    Elem aElem = Elem::U8, bElem = Elem::U8, outElem = Elem::I32;
    QuantParam aZero, bZero, aScale, bScale, yScale, yZero;
    bool requantized = false;
    i64 m = 1, n = 1, k = 1;
    Shape batch;            ///< the output's batch dimensions
    Strides aBatch, bBatch; ///< in matrices
    PLACER_HD void operator()(i64 i) const {
        const i64 j = i % n, row = (i / n) % m, b0 = i / (m * n);
        const i64 aBase = stridedOffset(b0, batch, aBatch) * m * k;
        const i64 bBase = stridedOffset(b0, batch, bBatch) * k * n;
        const i64 az = static_cast<i64>(aZero.at(io, row, 0)),
                  bz = static_cast<i64>(bZero.at(io, j, 0));
        i64 acc = 0;
        for (i64 p = 0; p < k; ++p)
            acc += (static_cast<i64>(loadAny(io.in[a], aElem, aBase + row * k + p)) - az) *
                   (static_cast<i64>(loadAny(io.in[b], bElem, bBase + p * n + j)) - bz);
        if (!requantized) {
            storeAny(io.out[0], outElem, i, static_cast<double>(acc));
            return;
        }
        storeAny(io.out[0], outElem, i,
                 requantize(static_cast<double>(acc), aScale.at(io, row, 1) * bScale.at(io, j, 1),
                            yScale.at(io, 0, 1), yZero.at(io, 0, 0), outElem));
    }
};

/// MatMulNBits (com.microsoft): Y[r, c] = sum over K of A[r, k] (code(c, k) - zero) * scale (+ the
/// bias), B's codes `bits` wide and packed low bits first, one scale and zero point per block of
/// blockSize along K; one thread per output element, in double. (The CPU runs its own kernel for
/// float32, backends/cpu/BlockQuantKernel.cpp; this is the GPU's and every other type's.)
/// MatMulNBits' weights: N columns of K codes of `bits` bits, in blocks of `blockSize` codes
/// (`blobBytes` bytes each), a scale per block, and optional zero points and bias (input
/// positions, or -1). geometry::readBlockQuant reads it from a node.
struct BlockQuantLayout {
    i64 k = 1, n = 1, blockSize = 16, blocks = 1, blobBytes = 8;
    int bits = 4;
    int zeros = -1;           ///< the zero points' input, or -1: the middle code
    bool packedZeros = false; ///< zero points as codes like B's, each row of N whole bytes
    int bias = -1;
};

struct BlockQuantMatmul : BlockQuantLayout {
    Io io;
    Elem elem = Elem::F32; ///< A's, the scales', float zero points', the bias' and Y's
    PLACER_HD void operator()(i64 i) const {
        const i64 column = i % n, row = i / n;
        const auto* codes = static_cast<const std::uint8_t*>(io.in[1]);
        const i64 perByte = 8 / bits;
        const unsigned mask = (1u << bits) - 1;
        double acc = 0;
        for (i64 b = 0; b < blocks; ++b) {
            const double scale = loadAny(io.in[2], elem, column * blocks + b);
            double zero = static_cast<double>(1 << (bits - 1));
            if (zeros >= 0 && packedZeros) {
                const auto* bytes = static_cast<const std::uint8_t*>(io.in[zeros]) +
                                    column * ((blocks + perByte - 1) / perByte);
                zero = static_cast<double>((bytes[b / perByte] >> ((b % perByte) * bits)) & mask);
            } else if (zeros >= 0) {
                zero = loadAny(io.in[zeros], elem, column * blocks + b);
            }
            const std::uint8_t* blob = codes + (column * blocks + b) * blobBytes;
            double dot = 0, sum = 0;
            for (i64 j = 0; j < blockSize && b * blockSize + j < k; ++j) {
                const double a = loadAny(io.in[0], elem, row * k + b * blockSize + j);
                dot +=
                    a * static_cast<double>((blob[j / perByte] >> ((j % perByte) * bits)) & mask);
                sum += a;
            }
            acc += scale * (dot - zero * sum);
        }
        if (bias >= 0)
            acc += loadAny(io.in[bias], elem, column);
        storeAny(io.out[0], elem, i, acc);
    }
};

/// ConvInteger and QLinearConv: a direct convolution of zero-point-shifted integers, requantized
/// for QLinearConv (with an int32 bias added before).
struct QuantizedConv : ConvWindow {
    Io io;
    int x = 0, w = 1, bias = -1;
    Elem xElem = Elem::U8, wElem = Elem::U8, outElem = Elem::I32, biasElem = Elem::I32;
    QuantParam xZero, wZero, xScale, wScale, yScale, yZero;
    bool requantized = false;
    PLACER_HD void operator()(i64 i) const {
        i64 outSize = 1, inSize = 1, kernelSize = 1;
        sizes(&outSize, &inSize, &kernelSize);
        const i64 position = i % outSize, oc = (i / outSize) % outChannels,
                  n = i / (outSize * outChannels);
        const i64 groupIn = channels / groups, groupOut = outChannels / groups, g = oc / groupOut;
        i64 o[kMaxRank];
        coordinates(position, outSpatial, o);
        const i64 xz = static_cast<i64>(xZero.at(io, 0, 0)),
                  wz = static_cast<i64>(wZero.at(io, oc, 0));
        i64 acc = bias >= 0 ? static_cast<i64>(loadAny(io.in[bias], biasElem, oc)) : 0;
        for (i64 kp = 0; kp < kernelSize; ++kp) {
            i64 kc[kMaxRank];
            coordinates(kp, kernel, kc);
            i64 offset = 0;
            bool inside = true;
            for (int d = 0; d < outSpatial.rank && inside; ++d) {
                const i64 at = o[d] * stride[d] - padBegin[d] + kc[d] * dilation[d];
                inside = at >= 0 && at < inSpatial.dims[d];
                offset = offset * inSpatial.dims[d] + at;
            }
            for (i64 c = 0; c < groupIn; ++c) {
                const i64 channel = g * groupIn + c;
                // Outside the input the zero point is read (padding holds the zero point).
                const i64 xv =
                    inside ? static_cast<i64>(loadAny(io.in[x], xElem,
                                                      (n * channels + channel) * inSize + offset))
                           : xz;
                acc += (xv - xz) * (static_cast<i64>(loadAny(
                                        io.in[w], wElem, (oc * groupIn + c) * kernelSize + kp)) -
                                    wz);
            }
        }
        if (!requantized) {
            storeAny(io.out[0], outElem, i, static_cast<double>(acc));
            return;
        }
        storeAny(io.out[0], outElem, i,
                 requantize(static_cast<double>(acc), xScale.at(io, 0, 1) * wScale.at(io, oc, 1),
                            yScale.at(io, 0, 1), yZero.at(io, 0, 0), outElem));
    }
};

/// RoiAlign: each output element [roi, c, ph, pw] averages (or takes the largest weighted
/// corner of) bilinear samples on a grid inside its bin of the region, as ONNX Runtime does.
struct RoiAlign {
    Io io;
    Elem elem = Elem::F32, roiElem = Elem::F32, batchElem = Elem::I64;
    i64 channels = 1, height = 1, width = 1, outHeight = 1, outWidth = 1;
    i64 samplingRatio = 0;
    double spatialScale = 1;
    bool halfPixel = true, isMax = false;
    /// One sampling point from its four weighted taps: their largest in max mode, else their sum.
    PLACER_HD double sample(double v1, double v2, double v3, double v4) const {
        if (!isMax)
            return v1 + v2 + v3 + v4;
        double m = v1 > v2 ? v1 : v2;
        m = m > v3 ? m : v3;
        return m > v4 ? m : v4;
    }
    PLACER_HD void operator()(i64 i) const {
        const i64 pw = i % outWidth, ph = (i / outWidth) % outHeight,
                  c = (i / (outWidth * outHeight)) % channels,
                  roi = i / (outWidth * outHeight * channels);
        const i64 batch = loadIndex(io.in[2], batchElem, roi);
        const double offset = halfPixel ? 0.5 : 0.0;
        const double x0 = loadAny(io.in[1], roiElem, roi * 4) * spatialScale - offset;
        const double y0 = loadAny(io.in[1], roiElem, roi * 4 + 1) * spatialScale - offset;
        const double x1 = loadAny(io.in[1], roiElem, roi * 4 + 2) * spatialScale - offset;
        const double y1 = loadAny(io.in[1], roiElem, roi * 4 + 3) * spatialScale - offset;
        double roiWidth = x1 - x0, roiHeight = y1 - y0;
        if (!halfPixel) {
            roiWidth = roiWidth > 1 ? roiWidth : 1;
            roiHeight = roiHeight > 1 ? roiHeight : 1;
        }
        const double binHeight = roiHeight / static_cast<double>(outHeight);
        const double binWidth = roiWidth / static_cast<double>(outWidth);
        const i64 gridH =
            samplingRatio > 0 ? samplingRatio : static_cast<i64>(ceil(roiHeight / outHeight));
        const i64 gridW =
            samplingRatio > 0 ? samplingRatio : static_cast<i64>(ceil(roiWidth / outWidth));
        const double count = gridH * gridW > 1 ? static_cast<double>(gridH * gridW) : 1.0;
        const i64 plane = (batch * channels + c) * height * width;
        double sum = 0, best = 0;
        bool any = false;
        for (i64 iy = 0; iy < gridH; ++iy) {
            double y = y0 + ph * binHeight + (iy + 0.5) * binHeight / static_cast<double>(gridH);
            for (i64 ix = 0; ix < gridW; ++ix) {
                double x = x0 + pw * binWidth + (ix + 0.5) * binWidth / static_cast<double>(gridW);
                double value = 0;
                if (y >= -1.0 && y <= height && x >= -1.0 && x <= width) {
                    y = y <= 0 ? 0 : y;
                    x = x <= 0 ? 0 : x;
                    i64 yLow = static_cast<i64>(y), xLow = static_cast<i64>(x), yHigh, xHigh;
                    if (yLow >= height - 1) {
                        yHigh = yLow = height - 1;
                        y = static_cast<double>(yLow);
                    } else {
                        yHigh = yLow + 1;
                    }
                    if (xLow >= width - 1) {
                        xHigh = xLow = width - 1;
                        x = static_cast<double>(xLow);
                    } else {
                        xHigh = xLow + 1;
                    }
                    const double ly = y - yLow, lx = x - xLow, hy = 1 - ly, hx = 1 - lx;
                    const double v1 =
                        hy * hx * loadAny(io.in[0], elem, plane + yLow * width + xLow);
                    const double v2 =
                        hy * lx * loadAny(io.in[0], elem, plane + yLow * width + xHigh);
                    const double v3 =
                        ly * hx * loadAny(io.in[0], elem, plane + yHigh * width + xLow);
                    const double v4 =
                        ly * lx * loadAny(io.in[0], elem, plane + yHigh * width + xHigh);
                    value = sample(v1, v2, v3, v4);
                }
                sum += value;
                best = !any || value > best ? value : best;
                any = true;
            }
        }
        storeAny(io.out[0], elem, i, isMax ? best : sum / count);
    }
};

/// Max and average pooling of any element type over an [n * c, spatial...] input, with ONNX
/// MaxPool's optional second output: the flat index of each maximum in the whole input
/// (row-major, or column-major over the spatial axes for storage_order 1).
struct PoolAny : PoolWindow {
    Io io;
    Elem elem = Elem::F32;
    bool isMax = false, includePadding = false, indices = false, columnMajor = false;
    PLACER_HD void operator()(i64 i) const {
        i64 o[3] = {0, 0, 0};
        const i64 rest = position(i, o);
        const i64 planeSize = in[0] * in[1] * in[2];
        double sum = 0, best = 0;
        i64 count = 0, bestAt = -1, windowSize = 1;
        for (int d = 0; d < spatial; ++d)
            windowSize *= kernel[d];
        for (i64 a = 0; a < kernel[0]; ++a) {
            const i64 p0 = o[0] * stride[0] - padL[0] + a * dilation[0];
            if (p0 < 0 || p0 >= in[0])
                continue;
            for (i64 b = 0; b < (spatial > 1 ? kernel[1] : 1); ++b) {
                const i64 p1 = spatial > 1 ? o[1] * stride[1] - padL[1] + b * dilation[1] : 0;
                if (p1 < 0 || p1 >= in[1])
                    continue;
                for (i64 e = 0; e < (spatial > 2 ? kernel[2] : 1); ++e) {
                    const i64 p2 = spatial > 2 ? o[2] * stride[2] - padL[2] + e * dilation[2] : 0;
                    if (p2 < 0 || p2 >= in[2])
                        continue;
                    const i64 offset = (p0 * in[1] + p1) * in[2] + p2;
                    const double v = loadAny(io.in[0], elem, rest * planeSize + offset);
                    sum += v;
                    if (bestAt < 0 || v > best) {
                        best = v;
                        bestAt = columnMajor ? (p2 * in[1] + p1) * in[0] + p0 : offset;
                    }
                    ++count;
                }
            }
        }
        if (isMax) {
            storeAny(io.out[0], elem, i, best);
            if (indices)
                storeAny(io.out[1], Elem::I64, i, static_cast<double>(rest * planeSize + bestAt));
            return;
        }
        const i64 divisor = includePadding ? windowSize : count;
        storeAny(io.out[0], elem, i, divisor > 0 ? sum / static_cast<double>(divisor) : 0.0);
    }
};

/// Rotary position embedding of one element (ONNX Runtime's RotaryEmbedding and the rotation
/// GroupQueryAttention applies): element `h` of a head whose element `k` is `at(k)`, at position
/// `pos`, against caches of `half` = rotaryDim / 2 values a position. Halves rotate element h
/// with h +- half; interleaved pairs rotate 2i with 2i + 1. Elements from rotaryDim on pass.
struct Rotation {
    int cos = -1, sin = -1; ///< the inputs holding the caches
    Elem trig = Elem::F32;
    i64 rotaryDim = 0, positions = 0;
    bool interleaved = false;
    template <class At>
    PLACER_HD double operator()(const Io& io, const At& at, i64 h, i64 pos) const {
        if (h >= rotaryDim || pos < 0 || pos >= positions)
            return at(h);
        const i64 half = rotaryDim / 2;
        i64 i = 0, other = 0;
        double sign = 1;
        if (interleaved) {
            i = h / 2;
            other = h % 2 == 0 ? h + 1 : h - 1;
            sign = h % 2 == 0 ? -1 : 1;
        } else {
            i = h < half ? h : h - half;
            other = h < half ? h + half : h - half;
            sign = h < half ? -1 : 1;
        }
        const double c = loadAny(io.in[cos], trig, pos * half + i);
        const double s = loadAny(io.in[sin], trig, pos * half + i);
        return at(h) * c + sign * at(other) * s;
    }
};

/// ONNX Runtime's RotaryEmbedding (com.microsoft): each head of the input ([B, S, heads * H] or
/// [B, heads, S, H]) rotated at its position: position_ids[b, s], or the scalar offset + s.
struct RotaryEmbedding {
    Io io;
    Elem elem = Elem::F32, positionElem = Elem::I64;
    Rotation rotation;
    i64 seq = 1, heads = 1, head = 1;
    bool headsFirst = false; ///< [B, heads, S, H]
    bool scalarOffset = false;
    PLACER_HD void operator()(i64 i) const {
        const i64 h = i % head;
        const i64 rowStart = i - h;
        i64 s = 0, b = 0;
        if (headsFirst) {
            s = (i / head) % seq;
            b = i / (head * seq * heads);
        } else {
            s = (i / (head * heads)) % seq;
            b = i / (head * heads * seq);
        }
        const i64 pos = scalarOffset
                            ? static_cast<i64>(loadAny(io.in[1], positionElem, 0)) + s
                            : static_cast<i64>(loadAny(io.in[1], positionElem, b * seq + s));
        const Elem e = elem;
        const void* in = io.in[0];
        const auto at = [in, e, rowStart](i64 k) { return loadAny(in, e, rowStart + k); };
        storeAny(io.out[0], elem, i, rotation(io, at, h, pos));
    }
};

/// ONNX Runtime's GroupQueryAttention (com.microsoft) for batch-major queries [B, S, heads * H]
/// (or query, key and value packed in one [B, S, (heads + 2 kvHeads) * H]) and a cache
/// [B, kvHeads, length, H]. Batch b holds seqlens_k[b] + 1 positions after this call, of which
/// the past is the first total - S (none on the first prompt: S equal to the total length).
/// Stage 0 (a row per present cache row) writes the present cache: the past's rows, then the new
/// keys (rotated at their positions where asked) and values, then zeros. Stage 1 (a row per query
/// row) attends causally, to the last `window` positions (itself one of them) where there is a
/// window (as ONNX Runtime 1.30 counts it), with a running softmax
/// kept in the output row; head n reads kv head n / (heads / kvHeads).
struct GroupQueryAttention {
    Io io;
    Elem elem = Elem::F32, lengthElem = Elem::I32;
    Rotation rotation;
    int stage = 0;
    int key = -1, value = -1, pastKey = -1, pastValue = -1, seqlens = -1, total = -1;
    i64 batch = 1, seq = 1, heads = 1, kvHeads = 1, head = 1;
    i64 pastLength = 0, presentLength = 0;
    bool packed = false, hasPast = false, rotary = false, smooth = false;
    double scale = 1, softcap = 0;
    i64 window = -1;

    PLACER_HD i64 pastOf(i64 b) const {
        const i64 length = static_cast<i64>(loadAny(io.in[total], lengthElem, 0));
        if (!hasPast || seq == length)
            return 0;
        const i64 past = static_cast<i64>(loadAny(io.in[seqlens], lengthElem, b)) + 1 - seq;
        return past < 0 ? 0 : past;
    }
    /// Element `h` of head `n` (a query head, or kvHeads' own index past `heads` for a key or
    /// value when packed) of token s of batch b, as the input holds it.
    PLACER_HD i64 queryAt(i64 b, i64 s, i64 n) const {
        const i64 width = packed ? heads + 2 * kvHeads : heads;
        return ((b * seq + s) * width + n) * head;
    }
    PLACER_HD i64 kvAt(i64 b, i64 s, i64 k) const { return ((b * seq + s) * kvHeads + k) * head; }

    PLACER_HD void operator()(i64 row, int lane, int lanes) const {
        if (stage == 0)
            present(row, lane, lanes);
        else
            attend(row, lane, lanes);
    }

    PLACER_HD void present(i64 row, int lane, int lanes) const {
        const i64 t = row % presentLength;
        const i64 k = (row / presentLength) % kvHeads;
        const i64 b = row / (presentLength * kvHeads);
        const i64 past = pastOf(b);
        const i64 out = row * head;
        for (i64 h = lane; h < head; h += lanes) {
            double k0 = 0, v0 = 0;
            if (t < past && t < pastLength) {
                const i64 from = ((b * kvHeads + k) * pastLength + t) * head + h;
                k0 = loadAny(io.in[pastKey], elem, from);
                v0 = loadAny(io.in[pastValue], elem, from);
            } else if (t >= past && t < past + seq) {
                const i64 s = t - past;
                const void* keys = io.in[packed ? 0 : key];
                const void* values = io.in[packed ? 0 : value];
                const i64 keyStart = packed ? queryAt(b, s, heads + k) : kvAt(b, s, k);
                const i64 valueStart = packed ? queryAt(b, s, heads + kvHeads + k) : kvAt(b, s, k);
                const Elem e = elem;
                const auto at = [keys, e, keyStart](i64 j) {
                    return loadAny(keys, e, keyStart + j);
                };
                k0 = rotary ? rotation(io, at, h, t) : at(h);
                v0 = loadAny(values, elem, valueStart + h);
            }
            storeAny(io.out[1], elem, out + h, k0);
            storeAny(io.out[2], elem, out + h, v0);
        }
    }

    PLACER_HD void attend(i64 row, int lane, int lanes) const {
        const i64 s = row % seq;
        const i64 n = (row / seq) % heads;
        const i64 b = row / (seq * heads);
        const i64 k = n / (heads / kvHeads);
        const i64 past = pastOf(b);
        const i64 causal = past + s + 1;
        const i64 first = window > 0 && causal > window ? causal - window : 0; // itself included
        const i64 last = causal < presentLength ? causal : presentLength;
        const i64 queryStart = queryAt(b, s, n);
        const i64 out = ((b * seq + s) * heads + n) * head;
        const Elem e = elem;
        const void* queries = io.in[0];
        const auto q = [queries, e, queryStart](i64 j) {
            return loadAny(queries, e, queryStart + j);
        };
        for (i64 h = lane; h < head; h += lanes)
            storeAny(io.out[0], elem, out + h, 0.0);
        double running = -1e300, sum = 0;
        for (i64 t = first; t < last; ++t) {
            const i64 cached = ((b * kvHeads + k) * presentLength + t) * head;
            double dot = 0;
            for (i64 h = lane; h < head; h += lanes) {
                const double qh = rotary ? rotation(io, q, h, past + s) : q(h);
                dot += qh * loadAny(io.out[1], elem, cached + h);
            }
            double score = allReduceSum(dot) * scale;
            if (softcap > 0)
                score = softcap * tanh(score / softcap);
            const double top = score > running ? score : running;
            const double kept = exp(running - top), weight = exp(score - top);
            sum = sum * kept + weight;
            for (i64 h = lane; h < head; h += lanes)
                storeAny(io.out[0], elem, out + h,
                         loadAny(io.out[0], elem, out + h) * kept +
                             weight * loadAny(io.out[2], elem, cached + h));
            running = top;
        }
        double rescale = 1;
        if (smooth) { // an extra logit of 0 in the denominator
            const double top = running > 0 ? running : 0;
            rescale = exp(running - top);
            sum = sum * rescale + exp(-top);
        }
        for (i64 h = lane; h < head; h += lanes)
            storeAny(io.out[0], elem, out + h,
                     sum > 0 ? loadAny(io.out[0], elem, out + h) * rescale / sum : 0.0);
    }
};

} // namespace placer::functors
