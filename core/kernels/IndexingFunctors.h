// The functors of the indexing and layout operators (GatherElements, ScatterND, OneHot, Trilu,
// CumSum, Hardmax, DepthToSpace, Resize, ConvTranspose, TopK, LRN, EyeLike,
// InstanceNormalization): plain C++ that nvcc compiles too, so that the CPU backend runs them on
// the host and the CUDA backend launches the same code (kernels/IndexingPlan.h says which
// functors, in which order, compute an op).
//
// Each functor reads its operands through `io`, which the backend fills with the node's input and
// output pointers at every run; everything else is fixed when the kernel is prepared.
#pragma once

#include "kernels/ElementFunctors.h"

namespace placer::functors {

/// The node's tensors at one run: inputs in the node's order, then outputs.
struct Io {
    static constexpr int kMaxInputs = 12;
    static constexpr int kMaxOutputs = 6;
    const void* in[kMaxInputs] = {};
    void* out[kMaxOutputs] = {};
};

/// Row-major coordinates of element i of `shape`.
PLACER_HD inline void coordinates(i64 i, const Shape& shape, i64* c) {
    for (int d = shape.rank - 1; d >= 0; --d) {
        c[d] = i % shape.dims[d];
        i /= shape.dims[d];
    }
}

PLACER_HD inline i64 wrapIndex(i64 index, i64 dim) {
    if (index < 0)
        index += dim;
    return index < 0 ? 0 : (index >= dim ? dim - 1 : index);
}

/// out0 = in0, element for element (the first step of the scatters).
struct CopyInput {
    Io io;
    int elementSize = 4;
    PLACER_HD void operator()(i64 i) const { copyElement(io.out[0], i, io.in[0], i, elementSize); }
};

/// out0[i] = in0 at the offset of element i of `shape` under `strides` (DepthToSpace,
/// SpaceToDepth: a transpose of a reshaped view).
struct StridedView {
    Io io;
    int elementSize = 4;
    Shape shape;
    Strides strides;
    PLACER_HD void operator()(i64 i) const {
        copyElement(io.out[0], i, io.in[0], stridedOffset(i, shape, strides), elementSize);
    }
};

/// GatherElements(data, indices): out has the indices' shape; along `axis` the index is read.
struct GatherElements {
    Io io;
    int elementSize = 4;
    Elem indexElem = Elem::I64;
    Shape shape;         ///< the output's (= the indices')
    Strides dataStrides; ///< the data's contiguous strides
    int axis = 0;
    i64 axisDim = 1; ///< the data's length along axis
    PLACER_HD void operator()(i64 i) const {
        i64 c[kMaxRank];
        coordinates(i, shape, c);
        c[axis] = wrapIndex(loadIndex(io.in[1], indexElem, i), axisDim);
        i64 offset = 0;
        for (int d = 0; d < shape.rank; ++d)
            offset += c[d] * dataStrides.s[d];
        copyElement(io.out[0], i, io.in[0], offset, elementSize);
    }
};

/// How a scatter combines an update with what is there: 0 replace, 1 add, 2 multiply, 3 max,
/// 4 min.
PLACER_HD inline double scatterCombine(int reduction, double old, double update) {
    switch (reduction) {
    case 1:
        return old + update;
    case 2:
        return old * update;
    case 3:
        return old > update ? old : update;
    case 4:
        return old < update ? old : update;
    default:
        return update;
    }
}

/// ScatterElements(data, indices, updates) after CopyInput: one thread applies every update in
/// order, as the operator's sequential definition says.
struct ScatterElements {
    Io io;
    Elem elem = Elem::F32, indexElem = Elem::I64;
    Shape shape;        ///< the updates' (= the indices')
    Strides outStrides; ///< the output's contiguous strides
    int axis = 0;
    i64 axisDim = 1;
    i64 count = 0;
    int reduction = 0;
    int elementSize = 4;
    PLACER_HD void operator()(i64 i) const {
        if (i != 0)
            return;
        // The updates' coordinates advance as an odometer; `base` is the output offset of all
        // but the axis, which the index replaces.
        i64 c[kMaxRank] = {};
        i64 base = 0;
        for (i64 j = 0; j < count; ++j) {
            const i64 offset =
                base + wrapIndex(loadIndex(io.in[1], indexElem, j), axisDim) * outStrides.s[axis];
            if (reduction == 0)
                copyElement(io.out[0], offset, io.in[2], j, elementSize);
            else
                storeAny(io.out[0], elem, offset,
                         scatterCombine(reduction, loadAny(io.out[0], elem, offset),
                                        loadAny(io.in[2], elem, j)));
            for (int d = shape.rank - 1; d >= 0; --d) {
                const i64 stride = d == axis ? 0 : outStrides.s[d];
                if (++c[d] < shape.dims[d]) {
                    base += stride;
                    break;
                }
                base -= (shape.dims[d] - 1) * stride;
                c[d] = 0;
            }
        }
    }
};

/// GatherND(data, indices) with batch_dims: output element i is slice element `within` of the
/// index tuple `row`.
struct GatherND {
    Io io;
    int elementSize = 4;
    Elem indexElem = Elem::I64;
    i64 slice = 1;       ///< elements per gathered slice
    i64 tupleLength = 1; ///< k, the last dimension of indices
    i64 tuplesPerBatch = 1;
    i64 batchStride = 0;        ///< data elements per batch entry
    i64 dims[kMaxRank] = {};    ///< the data's dimensions indexed by a tuple
    i64 strides[kMaxRank] = {}; ///< and their strides
    PLACER_HD void operator()(i64 i) const {
        const i64 row = i / slice, within = i % slice;
        i64 offset = (row / tuplesPerBatch) * batchStride + within;
        for (i64 j = 0; j < tupleLength; ++j)
            offset += wrapIndex(loadIndex(io.in[1], indexElem, row * tupleLength + j), dims[j]) *
                      strides[j];
        copyElement(io.out[0], i, io.in[0], offset, elementSize);
    }
};

/// ScatterND(data, indices, updates) after CopyInput, sequentially.
struct ScatterND {
    Io io;
    Elem elem = Elem::F32, indexElem = Elem::I64;
    i64 rows = 0, slice = 1, tupleLength = 1;
    i64 dims[kMaxRank] = {};
    i64 strides[kMaxRank] = {};
    int reduction = 0;
    PLACER_HD void operator()(i64 i) const {
        if (i != 0)
            return;
        for (i64 r = 0; r < rows; ++r) {
            i64 offset = 0;
            for (i64 j = 0; j < tupleLength; ++j)
                offset += wrapIndex(loadIndex(io.in[1], indexElem, r * tupleLength + j), dims[j]) *
                          strides[j];
            for (i64 w = 0; w < slice; ++w)
                storeAny(io.out[0], elem, offset + w,
                         scatterCombine(reduction, loadAny(io.out[0], elem, offset + w),
                                        loadAny(io.in[2], elem, r * slice + w)));
        }
    }
};

/// OneHot(indices, depth, values): values[1] where the index equals the position along the new
/// axis, values[0] elsewhere.
struct OneHot {
    Io io;
    Elem outElem = Elem::F32, indexElem = Elem::I64, valueElem = Elem::F32;
    i64 depth = 1, inner = 1;
    int valuesInput = 2;
    PLACER_HD void operator()(i64 i) const {
        const i64 within = i % inner, d = (i / inner) % depth, outer = i / (inner * depth);
        i64 index = toInteger(loadAny(io.in[0], indexElem, outer * inner + within));
        if (index < 0)
            index += depth;
        storeAny(io.out[0], outElem, i, loadAny(io.in[valuesInput], valueElem, index == d ? 1 : 0));
    }
};

/// Trilu(x, k?): the upper (or lower) triangle of each matrix, above (below) diagonal k.
struct Trilu {
    Io io;
    int elementSize = 4;
    Elem elem = Elem::F32, kElem = Elem::I64;
    i64 rows = 1, cols = 1;
    bool upper = true;
    int kInput = -1;
    PLACER_HD void operator()(i64 i) const {
        const i64 k = kInput >= 0 ? loadIndex(io.in[kInput], kElem, 0) : 0;
        const i64 col = i % cols, row = (i / cols) % rows;
        const bool keep = upper ? col - row >= k : col - row <= k;
        if (keep)
            copyElement(io.out[0], i, io.in[0], i, elementSize);
        else
            storeAny(io.out[0], elem, i, 0.0);
    }
};

/// CumSum(x, axis): one thread per line along the axis, which is read at run time.
struct CumSum {
    Io io;
    Elem elem = Elem::F32, axisElem = Elem::I64;
    Shape shape;
    bool exclusive = false, reverse = false;
    PLACER_HD void operator()(i64 t) const {
        i64 axis = loadIndex(io.in[1], axisElem, 0);
        if (axis < 0)
            axis += shape.rank;
        if (axis < 0 || axis >= shape.rank)
            return;
        const i64 dim = shape.dims[axis];
        i64 inner = 1, total = 1;
        for (int d = 0; d < shape.rank; ++d) {
            total *= shape.dims[d];
            if (d > axis)
                inner *= shape.dims[d];
        }
        if (dim == 0 || t >= total / dim)
            return;
        const i64 base = (t / inner) * dim * inner + t % inner;
        double acc = 0;
        for (i64 s = 0; s < dim; ++s) {
            const i64 j = reverse ? dim - 1 - s : s;
            const i64 at = base + j * inner;
            const double v = loadAny(io.in[0], elem, at);
            if (exclusive) {
                storeAny(io.out[0], elem, at, acc);
                acc += v;
            } else {
                acc += v;
                storeAny(io.out[0], elem, at, acc);
            }
        }
    }
};

/// Hardmax: one thread per line of `dim` elements (stride `inner`): 1 at the first maximum.
struct Hardmax {
    Io io;
    Elem elem = Elem::F32;
    i64 dim = 1, inner = 1;
    PLACER_HD void operator()(i64 t) const {
        const i64 base = (t / inner) * dim * inner + t % inner;
        i64 best = 0;
        double bestValue = -INFINITY;
        for (i64 j = 0; j < dim; ++j) {
            const double v = loadAny(io.in[0], elem, base + j * inner);
            if (j == 0 || v > bestValue) {
                bestValue = v;
                best = j;
            }
        }
        for (i64 j = 0; j < dim; ++j)
            storeAny(io.out[0], elem, base + j * inner, j == best ? 1.0 : 0.0);
    }
};

/// TopK: one thread per line; the k best in order (ties: the lower index first), by repeated
/// selection so that no scratch memory is needed.
struct TopK {
    Io io;
    Elem elem = Elem::F32;
    i64 dim = 1, inner = 1, k = 1;
    bool largest = true;
    /// Whether (va, ia) comes before (vb, ib) in the output order.
    PLACER_HD bool before(double va, i64 ia, double vb, i64 ib) const {
        if (va != vb)
            return largest ? va > vb : va < vb;
        return ia < ib;
    }
    PLACER_HD void operator()(i64 t) const {
        const i64 outer = t / inner, within = t % inner;
        const i64 base = outer * dim * inner + within;
        const i64 outBase = outer * k * inner + within;
        double prevValue = 0;
        i64 prevIndex = -1;
        for (i64 r = 0; r < k; ++r) {
            i64 best = -1;
            double bestValue = 0;
            for (i64 j = 0; j < dim; ++j) {
                const double v = loadAny(io.in[0], elem, base + j * inner);
                if (prevIndex >= 0 && !before(prevValue, prevIndex, v, j))
                    continue;
                if (best < 0 || before(v, j, bestValue, best)) {
                    best = j;
                    bestValue = v;
                }
            }
            if (best < 0)
                best = 0;
            storeAny(io.out[0], elem, outBase + r * inner, bestValue);
            storeAny(io.out[1], Elem::I64, outBase + r * inner, static_cast<double>(best));
            prevValue = bestValue;
            prevIndex = best;
        }
    }
};

/// Resize: every output element interpolates the input separably, per axis with 1 (nearest,
/// or an axis that does not change), 2 (linear) or 4 (cubic) taps.
struct Resize {
    Io io;
    Elem elem = Elem::F32;
    Shape in, out;
    double scale[kMaxRank] = {};
    double roiStart[kMaxRank] = {};
    double roiEnd[kMaxRank] = {};
    double length[kMaxRank] = {}; ///< the output length the coordinates use: in * scale
    int mode = 0;                 ///< 0 nearest, 1 linear, 2 cubic
    int transform = 0;   ///< 0 half_pixel, 1 asymmetric, 2 pytorch_half_pixel, 3 align_corners,
                         ///< 4 tf_crop_and_resize, 5 tf_half_pixel_for_nn
    int nearestMode = 0; ///< 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
    double cubicA = -0.75;
    bool excludeOutside = false;
    double extrapolation = 0;

    PLACER_HD double original(int d, i64 x) const {
        const double xr = static_cast<double>(x);
        const double n = static_cast<double>(in.dims[d]), m = length[d];
        switch (transform) {
        case 1:
            return xr / scale[d];
        case 2:
            return m > 1 ? (xr + 0.5) / scale[d] - 0.5 : 0.0;
        case 3:
            return m == 1 ? 0.0 : xr * (n - 1) / (m - 1);
        case 4:
            return m > 1
                       ? roiStart[d] * (n - 1) + xr * (roiEnd[d] - roiStart[d]) * (n - 1) / (m - 1)
                       : 0.5 * (roiStart[d] + roiEnd[d]) * (n - 1);
        case 5:
            return (xr + 0.5) / scale[d];
        default:
            return (xr + 0.5) / scale[d] - 0.5;
        }
    }

    PLACER_HD i64 nearest(double x) const {
        switch (nearestMode) {
        case 1: {
            const double f = floor(x);
            return toInteger(x - f == 0.5 ? f + 1 : floor(x + 0.5));
        }
        case 2:
            return toInteger(floor(x));
        case 3:
            return toInteger(ceil(x));
        default: {
            const double f = floor(x);
            return toInteger(x - f == 0.5 ? f : floor(x + 0.5));
        }
        }
    }

    /// The input positions output coordinate `x` of dimension `d` reads (up to 4, clamped into
    /// the input) and their weights: how many, or 0 when it lies outside the crop of
    /// tf_crop_and_resize (the output is the extrapolation value).
    PLACER_HD int tapsOf(int d, i64 x, i64* taps, double* weights) const {
        const i64 n = in.dims[d];
        const double xo = original(d, x);
        if (transform == 4 && (xo < 0 || xo > static_cast<double>(n - 1)))
            return 0;
        if (mode == 0 || (in.dims[d] == out.dims[d] && xo == floor(xo))) {
            i64 k = mode == 0 ? nearest(xo) : toInteger(xo);
            taps[0] = k < 0 ? 0 : (k >= n ? n - 1 : k);
            weights[0] = 1;
            return 1;
        }
        const double x0 = floor(xo), r = xo - x0;
        const i64 base = toInteger(x0);
        int count;
        if (mode == 1) {
            count = 2;
            taps[0] = base;
            taps[1] = base + 1;
            weights[0] = 1 - r;
            weights[1] = r;
        } else {
            const double a = cubicA;
            count = 4;
            const double r1 = r + 1, r2 = 1 - r, r3 = 2 - r;
            weights[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
            weights[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
            weights[2] = ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1;
            weights[3] = ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a;
            for (int t = 0; t < 4; ++t)
                taps[t] = base - 1 + t;
        }
        double sum = 0;
        for (int t = 0; t < count; ++t) {
            if (excludeOutside && (taps[t] < 0 || taps[t] >= n))
                weights[t] = 0;
            sum += weights[t];
            taps[t] = taps[t] < 0 ? 0 : (taps[t] >= n ? n - 1 : taps[t]);
        }
        if (excludeOutside && sum != 0) {
            for (int t = 0; t < count; ++t)
                weights[t] /= sum;
        }
        return count;
    }

    PLACER_HD void operator()(i64 i) const {
        i64 c[kMaxRank];
        coordinates(i, out, c);
        i64 taps[kMaxRank][4];
        double weights[kMaxRank][4];
        int count[kMaxRank];
        for (int d = 0; d < out.rank; ++d) {
            count[d] = tapsOf(d, c[d], taps[d], weights[d]);
            if (count[d] == 0) {
                storeAny(io.out[0], elem, i, extrapolation);
                return;
            }
        }
        int pick[kMaxRank] = {};
        double acc = 0;
        while (true) {
            double w = 1;
            i64 offset = 0;
            for (int d = 0; d < out.rank; ++d) {
                w *= weights[d][pick[d]];
                offset = offset * in.dims[d] + taps[d][pick[d]];
            }
            if (w != 0)
                acc += w * loadAny(io.in[0], elem, offset);
            int d = out.rank - 1;
            while (d >= 0 && ++pick[d] == count[d])
                pick[d--] = 0;
            if (d < 0)
                break;
        }
        storeAny(io.out[0], elem, i, acc);
    }
};

/// The geometry the direct convolutions share (ConvTranspose, ConvInteger, QLinearConv).
struct ConvWindow {
    i64 channels = 1, outChannels = 1, groups = 1;
    Shape inSpatial, outSpatial, kernel;
    i64 stride[kMaxRank] = {}, dilation[kMaxRank] = {}, padBegin[kMaxRank] = {};
    /// Elements per channel of the output and the input, and positions in the kernel.
    PLACER_HD void sizes(i64* outSize, i64* inSize, i64* kernelSize) const {
        *outSize = *inSize = *kernelSize = 1;
        for (int d = 0; d < outSpatial.rank; ++d) {
            *outSize *= outSpatial.dims[d];
            *inSize *= inSpatial.dims[d];
            *kernelSize *= kernel.dims[d];
        }
    }
};

/// ConvTranspose(x, w, b?) in gather form: each output element sums the inputs that the
/// transposed convolution scatters onto it.
struct ConvTranspose : ConvWindow {
    Io io;
    Elem xElem = Elem::F32, wElem = Elem::F32, bElem = Elem::F32, outElem = Elem::F32;
    bool hasBias = false;
    PLACER_HD void operator()(i64 i) const {
        i64 outSize = 1, inSize = 1, kernelSize = 1;
        sizes(&outSize, &inSize, &kernelSize);
        const i64 position = i % outSize;
        const i64 m = (i / outSize) % outChannels;
        const i64 n = i / (outSize * outChannels);
        const i64 groupIn = channels / groups, groupOut = outChannels / groups;
        const i64 g = m / groupOut, mm = m % groupOut;
        i64 o[kMaxRank];
        coordinates(position, outSpatial, o);
        double acc = hasBias ? loadAny(io.in[2], bElem, m) : 0.0;
        for (i64 kp = 0; kp < kernelSize; ++kp) {
            i64 k[kMaxRank];
            coordinates(kp, kernel, k);
            i64 inOffset = 0;
            bool inside = true;
            for (int d = 0; d < outSpatial.rank && inside; ++d) {
                const i64 t = o[d] + padBegin[d] - k[d] * dilation[d];
                if (t < 0 || t % stride[d] != 0) {
                    inside = false;
                    break;
                }
                const i64 x = t / stride[d];
                inside = x < inSpatial.dims[d];
                inOffset = inOffset * inSpatial.dims[d] + x;
            }
            if (!inside)
                continue;
            for (i64 cc = 0; cc < groupIn; ++cc) {
                const i64 c = g * groupIn + cc;
                acc += loadAny(io.in[0], xElem, (n * channels + c) * inSize + inOffset) *
                       loadAny(io.in[1], wElem, (c * groupOut + mm) * kernelSize + kp);
            }
        }
        storeAny(io.out[0], outElem, i, acc);
    }
};

/// LRN across channels: x / (bias + alpha / size * sum of squares in the window) ^ beta.
struct Lrn {
    Io io;
    Elem elem = Elem::F32;
    i64 channels = 1, inner = 1, size = 1;
    double alpha = 1e-4, beta = 0.75, bias = 1;
    PLACER_HD void operator()(i64 i) const {
        const i64 c = (i / inner) % channels;
        const i64 base = i - c * inner;
        const i64 lo = c - (size - 1) / 2, hi = c + size / 2;
        double sum = 0;
        for (i64 j = lo < 0 ? 0 : lo; j <= hi && j < channels; ++j) {
            const double v = loadAny(io.in[0], elem, base + j * inner);
            sum += v * v;
        }
        const double x = loadAny(io.in[0], elem, i);
        storeAny(io.out[0], elem, i, x / pow(bias + alpha / static_cast<double>(size) * sum, beta));
    }
};

/// EyeLike: ones on diagonal k of a 2-D output.
struct EyeLike {
    Io io;
    Elem elem = Elem::F32;
    i64 cols = 1, k = 0;
    PLACER_HD void operator()(i64 i) const {
        storeAny(io.out[0], elem, i, (i % cols) - (i / cols) == k ? 1.0 : 0.0);
    }
};

/// InstanceNormalization: one row per (batch, channel), normalised over the spatial elements,
/// then scaled and shifted per channel.
struct InstanceNorm {
    Io io;
    Elem elem = Elem::F32, scaleElem = Elem::F32, biasElem = Elem::F32;
    i64 channels = 1, count = 1;
    double epsilon = 1e-5;
    PLACER_HD void operator()(i64 row, int lane, int lanes) const {
        const i64 base = row * count;
        double sum = 0;
        for (i64 j = lane; j < count; j += lanes)
            sum += loadAny(io.in[0], elem, base + j);
        const double mean = allReduceSum(sum) / static_cast<double>(count);
        double var = 0;
        for (i64 j = lane; j < count; j += lanes) {
            const double d = loadAny(io.in[0], elem, base + j) - mean;
            var += d * d;
        }
        const double inv = 1.0 / sqrt(allReduceSum(var) / static_cast<double>(count) + epsilon);
        const i64 c = row % channels;
        const double scale = loadAny(io.in[1], scaleElem, c) * inv;
        const double shift = loadAny(io.in[2], biasElem, c);
        for (i64 j = lane; j < count; j += lanes)
            storeAny(io.out[0], elem, base + j,
                     (loadAny(io.in[0], elem, base + j) - mean) * scale + shift);
    }
};

/// SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization (ONNX Runtime's RMSNorm):
/// per row of `count`, s = x (+ skip) (+ bias) and y = s / sqrt(mean(s^2) + epsilon) * scale;
/// where asked, the row's 1 / sqrt(mean(s^2) + epsilon), its mean (0: none is subtracted), and s.
struct RmsNorm {
    Io io;
    Elem elem = Elem::F32, scaleElem = Elem::F32;
    int skip = -1, bias = -1, scale = 1;
    int meanOutput = -1, invOutput = -1, sumOutput = -1;
    i64 count = 1, skipCount = 1;
    double epsilon = 1e-5;
    PLACER_HD double value(i64 base, i64 j) const {
        double v = loadAny(io.in[0], elem, base + j);
        if (skip >= 0)
            v += loadAny(io.in[skip], elem, (base + j) % skipCount);
        if (bias >= 0)
            v += loadAny(io.in[bias], elem, j);
        return v;
    }
    PLACER_HD void operator()(i64 row, int lane, int lanes) const {
        const i64 base = row * count;
        double squares = 0;
        for (i64 j = lane; j < count; j += lanes) {
            const double v = value(base, j);
            squares += v * v;
        }
        const double inv = 1.0 / sqrt(allReduceSum(squares) / static_cast<double>(count) + epsilon);
        for (i64 j = lane; j < count; j += lanes) {
            const double v = value(base, j);
            if (sumOutput >= 0)
                storeAny(io.out[sumOutput], elem, base + j, v);
            storeAny(io.out[0], elem, base + j, v * inv * loadAny(io.in[scale], scaleElem, j));
        }
        if (lane == 0 && invOutput >= 0)
            storeAny(io.out[invOutput], Elem::F32, row, inv);
        if (lane == 0 && meanOutput >= 0)
            storeAny(io.out[meanOutput], Elem::F32, row, 0.0);
    }
};

/// QuantizeLinear (x / scale + zero point, rounded half to even, saturated to the output type) and
/// DequantizeLinear ((x - zero point) * scale), with one scale per tensor or per channel of `axis`.
struct Quantize {
    Io io;
    Elem xElem = Elem::F32, scaleElem = Elem::F32, zeroElem = Elem::U8, outElem = Elem::U8;
    bool dequantize = false, hasZero = false, perChannel = false;
    i64 channels = 1, inner = 1;
    PLACER_HD void operator()(i64 i) const {
        const i64 c = perChannel ? (i / inner) % channels : 0;
        const double scale = loadAny(io.in[1], scaleElem, c);
        const double zero = hasZero ? loadAny(io.in[2], zeroElem, c) : 0.0;
        const double x = loadAny(io.in[0], xElem, i);
        if (dequantize) {
            storeAny(io.out[0], outElem, i, (x - zero) * scale);
            return;
        }
        // In float32 when the operands are, as ONNX computes it (rounding ties differ otherwise).
        double q = (xElem == Elem::F32 && scaleElem == Elem::F32)
                       ? static_cast<double>(
                             nearbyint(static_cast<float>(x) / static_cast<float>(scale))) +
                             zero
                       : nearbyint(x / scale) + zero;
        const double lo = outElem == Elem::I8 ? -128.0 : 0.0;
        const double hi = outElem == Elem::I8 ? 127.0 : 255.0;
        q = q < lo ? lo : (q > hi ? hi : q);
        storeAny(io.out[0], outElem, i, q);
    }
};

/// Mean of up to Io::kMaxInputs tensors with numpy broadcasting.
struct Mean {
    Io io;
    Elem elem = Elem::F32;
    int count = 1;
    Shape shape;
    Strides strides[Io::kMaxInputs];
    PLACER_HD void operator()(i64 i) const {
        double sum = 0;
        for (int k = 0; k < count; ++k)
            sum += loadAny(io.in[k], elem, stridedOffset(i, shape, strides[k]));
        storeAny(io.out[0], elem, i, sum / static_cast<double>(count));
    }
};

/// ReverseSequence: along the time axis, the first seq_lens[b] elements of batch b reversed.
struct ReverseSequence {
    Io io;
    int elementSize = 4;
    Elem lengthElem = Elem::I64;
    Shape shape;
    int timeAxis = 0, batchAxis = 1;
    PLACER_HD void operator()(i64 i) const {
        i64 c[kMaxRank];
        coordinates(i, shape, c);
        const i64 length = loadIndex(io.in[1], lengthElem, c[batchAxis]);
        const i64 t = c[timeAxis];
        if (t < length)
            c[timeAxis] = length - 1 - t;
        i64 from = 0;
        for (int d = 0; d < shape.rank; ++d)
            from = from * shape.dims[d] + c[d];
        copyElement(io.out[0], i, io.in[0], from, elementSize);
    }
};

/// GridSample (4-D): each output pixel samples its channel of the input at the grid's
/// normalised coordinates, with nearest, bilinear or bicubic interpolation and zeros, border or
/// reflection padding, as ONNX Runtime does.
/// A 4-D (NCHW) input's extents and its output's planes.
struct Planes {
    i64 n = 1, c = 1, h = 1, w = 1, outH = 1, outW = 1;
};

struct GridSample : Planes {
    Io io;
    Elem elem = Elem::F32, gridElem = Elem::F32;
    int mode = 1;    ///< 0 nearest, 1 bilinear, 2 bicubic
    int padding = 0; ///< 0 zeros, 1 border, 2 reflection
    bool alignCorners = false;

    PLACER_HD static double reflect(double x, double lo, double hi) {
        const double range = hi - lo;
        if (range <= 0)
            return lo;
        if (x < lo) {
            const double dx = lo - x;
            const i64 k = toInteger(dx / range);
            const double r = dx - static_cast<double>(k) * range;
            return k % 2 == 0 ? lo + r : hi - r;
        }
        if (x > hi) {
            const double dx = x - hi;
            const i64 k = toInteger(dx / range);
            const double r = dx - static_cast<double>(k) * range;
            return k % 2 == 0 ? hi - r : lo + r;
        }
        return x;
    }
    PLACER_HD double unnormalize(double g, i64 size) const {
        return alignCorners ? (g + 1) / 2 * static_cast<double>(size - 1)
                            : ((g + 1) * static_cast<double>(size) - 1) / 2;
    }
    PLACER_HD double pixel(i64 base, i64 y, i64 x) const {
        if (padding == 0 && (x < 0 || x >= w || y < 0 || y >= h))
            return 0;
        if (padding == 2) {
            const double lo = alignCorners ? 0.0 : -0.5;
            x = toInteger(reflect(static_cast<double>(x), lo,
                                  alignCorners ? static_cast<double>(w - 1) : w - 0.5));
            y = toInteger(reflect(static_cast<double>(y), lo,
                                  alignCorners ? static_cast<double>(h - 1) : h - 0.5));
        }
        x = x < 0 ? 0 : (x >= w ? w - 1 : x);
        y = y < 0 ? 0 : (y >= h ? h - 1 : y);
        return loadAny(io.in[0], elem, base + y * w + x);
    }
    PLACER_HD static void cubicWeights(double t, double* k) {
        const double a = -0.75;
        const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
        k[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
        k[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
        k[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
        k[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
    }
    PLACER_HD void operator()(i64 i) const {
        const i64 ox = i % outW, oy = (i / outW) % outH, ch = (i / (outW * outH)) % c,
                  b = i / (outW * outH * c);
        const i64 g = ((b * outH + oy) * outW + ox) * 2;
        double x = unnormalize(loadAny(io.in[1], gridElem, g), w);
        double y = unnormalize(loadAny(io.in[1], gridElem, g + 1), h);
        if (padding == 1 && mode != 2) {
            x = x < 0 ? 0 : (x > static_cast<double>(w - 1) ? static_cast<double>(w - 1) : x);
            y = y < 0 ? 0 : (y > static_cast<double>(h - 1) ? static_cast<double>(h - 1) : y);
        } else if (padding == 2 && mode != 2) {
            const double lo = alignCorners ? 0.0 : -0.5;
            x = reflect(x, lo, alignCorners ? static_cast<double>(w - 1) : w - 0.5);
            y = reflect(y, lo, alignCorners ? static_cast<double>(h - 1) : h - 0.5);
        }
        const i64 base = (b * c + ch) * h * w;
        double value = 0;
        if (mode == 0) {
            value = pixel(base, toInteger(nearbyint(y)), toInteger(nearbyint(x)));
        } else if (mode == 1) {
            const double x0 = floor(x), y0 = floor(y);
            const double fx = x - x0, fy = y - y0;
            const i64 ix = toInteger(x0), iy = toInteger(y0);
            value = (1 - fy) * ((1 - fx) * pixel(base, iy, ix) + fx * pixel(base, iy, ix + 1)) +
                    fy * ((1 - fx) * pixel(base, iy + 1, ix) + fx * pixel(base, iy + 1, ix + 1));
        } else {
            const double x0 = floor(x), y0 = floor(y);
            double kx[4], ky[4];
            cubicWeights(x - x0, kx);
            cubicWeights(y - y0, ky);
            const i64 ix = toInteger(x0) - 1, iy = toInteger(y0) - 1;
            for (int r = 0; r < 4; ++r)
                for (int q = 0; q < 4; ++q)
                    value += ky[r] * kx[q] * pixel(base, iy + r, ix + q);
        }
        storeAny(io.out[0], elem, i, value);
    }
};

/// Einsum over up to Io::kMaxInputs operands: each output element sums, over every value of the
/// summed labels, the product of the operands at the labels' values.
struct Einsum {
    static constexpr int kMaxLabels = 16;
    Io io;
    Elem elem = Elem::F32;
    int inputs = 1;
    int labels = 0;            ///< labels 0..labels-1: output ones first, then summed ones
    int outLabels = 0;         ///< how many of them the output has, in its axis order
    i64 dims[kMaxLabels] = {}; ///< each label's extent
    i64 sumCount = 1;          ///< product of the summed labels' extents
    i64 strides[Io::kMaxInputs][kMaxLabels] = {}; ///< per operand, per label (0 when absent)
    PLACER_HD void operator()(i64 i) const {
        i64 value[kMaxLabels];
        i64 rest = i;
        for (int l = outLabels - 1; l >= 0; --l) {
            value[l] = rest % dims[l];
            rest /= dims[l];
        }
        double acc = 0;
        for (i64 s = 0; s < sumCount; ++s) {
            i64 r = s;
            for (int l = labels - 1; l >= outLabels; --l) {
                value[l] = r % dims[l];
                r /= dims[l];
            }
            double product = 1;
            for (int k = 0; k < inputs; ++k) {
                i64 offset = 0;
                for (int l = 0; l < labels; ++l)
                    offset += value[l] * strides[k][l];
                product *= loadAny(io.in[k], elem, offset);
            }
            acc += product;
        }
        storeAny(io.out[0], elem, i, acc);
    }
};

} // namespace placer::functors
