// The functors of the indexing and layout operators (GatherElements, ScatterND, OneHot, Trilu,
// CumSum, Hardmax, DepthToSpace, Resize, ConvTranspose, TopK, LRN, EyeLike,
// InstanceNormalization): plain C++ that nvcc compiles too, so that the CPU backend runs them on
// the host and the CUDA backend launches the same code (runtime/IndexingPlan.h says which
// functors, in which order, compute an op).
//
// Each functor reads its operands through `io`, which the backend fills with the node's input and
// output pointers at every run; everything else is fixed when the kernel is prepared.
#pragma once

#include "runtime/ElementFunctors.h"

namespace placer::functors {

/// The node's tensors at one run: inputs in the node's order, then outputs.
struct Io {
    static constexpr int kMaxInputs = 6;
    const void* in[kMaxInputs] = {};
    void* out[2] = {};
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
    PLACER_HD void operator()(i64 i) const {
        if (i != 0)
            return;
        for (i64 j = 0; j < count; ++j) {
            i64 c[kMaxRank];
            coordinates(j, shape, c);
            c[axis] = wrapIndex(loadIndex(io.in[1], indexElem, j), axisDim);
            i64 offset = 0;
            for (int d = 0; d < shape.rank; ++d)
                offset += c[d] * outStrides.s[d];
            storeAny(io.out[0], elem, offset,
                     scatterCombine(reduction, loadAny(io.out[0], elem, offset),
                                    loadAny(io.in[2], elem, j)));
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
        i64 index = static_cast<i64>(loadAny(io.in[0], indexElem, outer * inner + within));
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
            return static_cast<i64>(x - f == 0.5 ? f + 1 : floor(x + 0.5));
        }
        case 2:
            return static_cast<i64>(floor(x));
        case 3:
            return static_cast<i64>(ceil(x));
        default: {
            const double f = floor(x);
            return static_cast<i64>(x - f == 0.5 ? f : floor(x + 0.5));
        }
        }
    }

    PLACER_HD void operator()(i64 i) const {
        i64 c[kMaxRank];
        coordinates(i, out, c);
        i64 taps[kMaxRank][4];
        double weights[kMaxRank][4];
        int count[kMaxRank];
        for (int d = 0; d < out.rank; ++d) {
            const i64 n = in.dims[d];
            const double x = original(d, c[d]);
            if (transform == 4 && (x < 0 || x > static_cast<double>(n - 1))) {
                storeAny(io.out[0], elem, i, extrapolation);
                return;
            }
            if (mode == 0 || (in.dims[d] == out.dims[d] && x == floor(x))) {
                i64 k = mode == 0 ? nearest(x) : static_cast<i64>(x);
                k = k < 0 ? 0 : (k >= n ? n - 1 : k);
                taps[d][0] = k;
                weights[d][0] = 1;
                count[d] = 1;
                continue;
            }
            const double x0 = floor(x), r = x - x0;
            const i64 base = static_cast<i64>(x0);
            if (mode == 1) {
                count[d] = 2;
                taps[d][0] = base;
                taps[d][1] = base + 1;
                weights[d][0] = 1 - r;
                weights[d][1] = r;
            } else {
                const double a = cubicA;
                count[d] = 4;
                const double r1 = r + 1, r2 = 1 - r, r3 = 2 - r;
                weights[d][0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
                weights[d][1] = ((a + 2) * r - (a + 3)) * r * r + 1;
                weights[d][2] = ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1;
                weights[d][3] = ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a;
                for (int t = 0; t < 4; ++t)
                    taps[d][t] = base - 1 + t;
            }
            double sum = 0;
            for (int t = 0; t < count[d]; ++t) {
                if (excludeOutside && (taps[d][t] < 0 || taps[d][t] >= n))
                    weights[d][t] = 0;
                sum += weights[d][t];
                taps[d][t] = taps[d][t] < 0 ? 0 : (taps[d][t] >= n ? n - 1 : taps[d][t]);
            }
            if (excludeOutside && sum != 0) {
                for (int t = 0; t < count[d]; ++t)
                    weights[d][t] /= sum;
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

/// ConvTranspose(x, w, b?) in gather form: each output element sums the inputs that the
/// transposed convolution scatters onto it.
struct ConvTranspose {
    Io io;
    Elem xElem = Elem::F32, wElem = Elem::F32, bElem = Elem::F32, outElem = Elem::F32;
    bool hasBias = false;
    i64 channels = 1, outChannels = 1, groups = 1;
    Shape inSpatial, outSpatial, kernel;
    i64 stride[kMaxRank] = {}, dilation[kMaxRank] = {}, padBegin[kMaxRank] = {};
    PLACER_HD void operator()(i64 i) const {
        i64 outSize = 1, inSize = 1, kernelSize = 1;
        for (int d = 0; d < outSpatial.rank; ++d) {
            outSize *= outSpatial.dims[d];
            inSize *= inSpatial.dims[d];
            kernelSize *= kernel.dims[d];
        }
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

} // namespace placer::functors
