// The functors of ONNX's signal and text operators: DFT, STFT, MelWeightMatrix and
// TfIdfVectorizer. Plain C++ that nvcc compiles too, run by both backends through
// kernels/IndexingPlan.h. Transforms are direct sums (O(n) per output bin), exact in double.
#pragma once

#include "kernels/IndexingFunctors.h"

namespace placer::functors {

constexpr double kPi = 3.14159265358979323846;

/// DFT along one axis of a real ([..., 1]) or complex ([..., 2]) signal viewed as
/// [outer, length, inner, parts]; the output is [outer, bins, inner, 2]. A signal shorter than
/// the transform is zero-padded, a longer one cut. The inverse divides by the length.
struct Dft {
    Io io;
    Elem elem = Elem::F32, outElem = Elem::F32;
    i64 outer = 1, inner = 1, length = 1, bins = 1, size = 1; ///< size: the transform's length
    int parts = 1;
    bool inverse = false;
    PLACER_HD void operator()(i64 i) const {
        const i64 r = i % inner, k = (i / inner) % bins, o = i / (inner * bins);
        const double sign = inverse ? 1.0 : -1.0;
        double re = 0, im = 0;
        const i64 n = length < size ? length : size;
        for (i64 t = 0; t < n; ++t) {
            const i64 at = ((o * length + t) * inner + r) * parts;
            const double xr = loadAny(io.in[0], elem, at);
            const double xi = parts == 2 ? loadAny(io.in[0], elem, at + 1) : 0.0;
            // k * t mod size keeps the angle small, and exact for whole turns.
            const double angle =
                sign * 2 * kPi * static_cast<double>((k * t) % size) / static_cast<double>(size);
            const double c = cos(angle), s = sin(angle);
            re += xr * c - xi * s;
            im += xr * s + xi * c;
        }
        if (inverse) {
            re /= static_cast<double>(size);
            im /= static_cast<double>(size);
        }
        storeAny(io.out[0], outElem, 2 * i, re);
        storeAny(io.out[0], outElem, 2 * i + 1, im);
    }
};

/// STFT of a [batch, length, parts] signal: frame f starts at f * step, is multiplied by the
/// window (input `window`, or ones) and transformed; the output is [batch, frames, bins, 2].
struct Stft {
    Io io;
    Elem elem = Elem::F32, windowElem = Elem::F32;
    int window = -1;
    i64 length = 1, frames = 1, bins = 1, frameLength = 1, step = 1;
    int parts = 1;
    PLACER_HD void operator()(i64 i) const {
        const i64 k = i % bins, f = (i / bins) % frames, b = i / (bins * frames);
        double re = 0, im = 0;
        for (i64 t = 0; t < frameLength; ++t) {
            const i64 sample = f * step + t;
            if (sample >= length)
                break;
            const i64 at = (b * length + sample) * parts;
            const double w = window >= 0 ? loadAny(io.in[window], windowElem, t) : 1.0;
            const double xr = loadAny(io.in[0], elem, at) * w;
            const double xi = parts == 2 ? loadAny(io.in[0], elem, at + 1) * w : 0.0;
            const double angle = -2 * kPi * static_cast<double>((k * t) % frameLength) /
                                 static_cast<double>(frameLength);
            const double c = cos(angle), s = sin(angle);
            re += xr * c - xi * s;
            im += xr * s + xi * c;
        }
        storeAny(io.out[0], elem, 2 * i, re);
        storeAny(io.out[0], elem, 2 * i + 1, im);
    }
};

/// MelWeightMatrix after ZeroOutput, one thread per mel bin (a column of the
/// [dft_length / 2 + 1, bins] output): a triangle between the spectrogram bins of the mel points
/// i, i + 1 and i + 2, spaced evenly on the mel scale between the edge frequencies. The scalar
/// inputs (dft_length, sample_rate, lower and upper edge) are read at run time.
struct MelWeightMatrix {
    Io io;
    Elem elem[5] = {Elem::I64, Elem::I64, Elem::I64, Elem::F32, Elem::F32};
    Elem outElem = Elem::F32;
    i64 melBins = 1, rows = 1;
    PLACER_HD i64 binOf(i64 point, double lowMel, double melStep, double dftLength,
                        double sampleRate) const {
        const double mel = static_cast<double>(point) * melStep + lowMel;
        const double hertz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
        return static_cast<i64>(floor((dftLength + 1) * hertz / sampleRate));
    }
    PLACER_HD void operator()(i64 i) const {
        const double dftLength = loadAny(io.in[1], elem[1], 0);
        const double sampleRate = loadAny(io.in[2], elem[2], 0);
        const double lowMel = 2595.0 * log10(1.0 + loadAny(io.in[3], elem[3], 0) / 700.0);
        const double highMel = 2595.0 * log10(1.0 + loadAny(io.in[4], elem[4], 0) / 700.0);
        // The points are spaced by (high - low) / (bins + 2), as ONNX's reference spaces them.
        const double melStep = (highMel - lowMel) / static_cast<double>(melBins + 2);
        const i64 lower = binOf(i, lowMel, melStep, dftLength, sampleRate);
        const i64 center = binOf(i + 1, lowMel, melStep, dftLength, sampleRate);
        const i64 upper = binOf(i + 2, lowMel, melStep, dftLength, sampleRate);
        auto put = [&](i64 row, double value) {
            if (row >= 0 && row < rows)
                storeAny(io.out[0], outElem, row * melBins + i, value);
        };
        if (center == lower) {
            put(center, 1.0);
        } else {
            for (i64 j = lower; j <= center; ++j)
                put(j, static_cast<double>(j - lower) / static_cast<double>(center - lower));
        }
        for (i64 j = center; j < upper; ++j)
            put(j, static_cast<double>(upper - j) / static_cast<double>(upper - center));
    }
};

/// TfIdfVectorizer, one thread per row of a [rows, length] integer input. Every n-gram of the
/// pool found in the row (its items `skip + 1` apart, for each skip up to maxSkip; unigrams
/// once) counts towards its output column; the mode then turns counts into TF, IDF or TF-IDF.
struct TfIdf {
    static constexpr int kMaxPool = 256;   ///< pool items
    static constexpr int kMaxGram = 8;     ///< longest n-gram
    static constexpr int kMaxNgrams = 256; ///< n-grams in the pool
    enum Mode : int { Tf, Idf, TfTimesIdf };
    Io io;
    Elem elem = Elem::I64;
    i64 rows = 1, length = 1, width = 1; ///< width: output columns
    int minGram = 1, maxGram = 1, maxSkip = 0, mode = Tf;
    bool weighted = false;
    i64 pool[kMaxPool] = {};
    int groupStart[kMaxGram + 1] = {}; ///< pool item where n-grams of length n start (index n)
    int groupEnd[kMaxGram + 1] = {};
    int firstNgram[kMaxGram + 1] = {}; ///< ordinal of the first n-gram of length n
    int column[kMaxNgrams] = {};       ///< each n-gram's output column
    float weight[kMaxNgrams] = {};
    int ngrams = 0;
    PLACER_HD void operator()(i64 row) const {
        const i64 base = row * width;
        for (i64 j = 0; j < width; ++j)
            storeAny(io.out[0], Elem::F32, base + j, 0.0);
        int start = minGram;
        for (i64 distance = 1; distance <= maxSkip + 1; ++distance) {
            for (i64 s = 0; s < length; ++s) {
                if (s + distance * (start - 1) >= length)
                    break;
                for (int n = start; n <= maxGram; ++n) {
                    if (s + distance * (n - 1) >= length)
                        break;
                    const int found = find(row, s, distance, n);
                    if (found >= 0) {
                        const i64 at = base + column[found];
                        storeAny(io.out[0], Elem::F32, at, loadAny(io.out[0], Elem::F32, at) + 1);
                    }
                }
            }
            // Unigrams do not depend on the skip: they are counted on the first pass only.
            if (start == 1 && ++start > maxGram)
                break;
        }
        if (mode == Tf)
            return;
        for (int k = 0; k < ngrams; ++k) {
            const i64 at = base + column[k];
            const double count = loadAny(io.out[0], Elem::F32, at);
            const double w = weighted ? weight[k] : 1.0;
            storeAny(io.out[0], Elem::F32, at,
                     mode == Tf    ? count
                     : mode == Idf ? (count > 0 ? w : 0.0)
                                   : count * w);
        }
    }
    /// The ordinal of the pool's n-gram of length n equal to the row's items s, s + d, ...
    PLACER_HD int find(i64 row, i64 s, i64 d, int n) const {
        if (n > kMaxGram)
            return -1;
        for (int item = groupStart[n], k = 0; item + n <= groupEnd[n]; item += n, ++k) {
            bool equal = true;
            for (int m = 0; m < n && equal; ++m)
                equal = pool[item + m] == loadIndex(io.in[0], elem, row * length + s + d * m);
            if (equal)
                return firstNgram[n] + k;
        }
        return -1;
    }
};

} // namespace placer::functors
