// The functors of the training-mode operators: Dropout that drops, BatchNormalization on batch
// statistics, and the optimisers of ONNX's ai.onnx.preview.training domain (Adagrad, Momentum,
// Adam). Plain C++ that nvcc compiles too, run by both backends through kernels/IndexingPlan.h.
#pragma once

#include "kernels/IndexingFunctors.h"

#include <cstdint>

namespace placer::functors {

/// A uniform number in [0, 1) for element i of a stream keyed by `seed` (SplitMix64 of the
/// pair): the same on every backend and thread count, so a seeded run is reproducible.
PLACER_HD inline double uniformAt(std::uint64_t seed, i64 i) {
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(i) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

/// The random operators, drawn from uniformAt keyed by the node's `seed` attribute (0 when the
/// model gives none, so a run is reproducible): RandomUniform(Like) in [low, high),
/// RandomNormal(Like) by Box-Muller from two draws, Bernoulli 1 where a draw is below the
/// input's probability, and Multinomial one class per (batch, sample) from the softmax of the
/// input's row, by walking its cumulative sum.
struct Random {
    enum Kind : int { Uniform, Normal, Bernoulli, Multinomial };
    Io io;
    Kind kind = Uniform;
    Elem elem = Elem::F32;   ///< the output's
    Elem inElem = Elem::F32; ///< Bernoulli's probabilities, Multinomial's logits
    double a = 0, b = 1;     ///< low and high, or mean and scale
    std::uint64_t seed = 0;
    i64 classes = 1, samples = 1;
    PLACER_HD void operator()(i64 i) const {
        double value = 0;
        if (kind == Uniform) {
            value = a + (b - a) * uniformAt(seed, i);
        } else if (kind == Normal) {
            const double u1 = 1.0 - uniformAt(seed, 2 * i); // in (0, 1]
            const double u2 = uniformAt(seed, 2 * i + 1);
            value = a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        } else if (kind == Bernoulli) {
            value = uniformAt(seed, i) < loadAny(io.in[0], inElem, i) ? 1.0 : 0.0;
        } else {
            const i64 row = (i / samples) * classes;
            double top = loadAny(io.in[0], inElem, row);
            for (i64 c = 1; c < classes; ++c)
                top = fmax(top, loadAny(io.in[0], inElem, row + c));
            double total = 0;
            for (i64 c = 0; c < classes; ++c)
                total += exp(loadAny(io.in[0], inElem, row + c) - top);
            double left = uniformAt(seed, i) * total;
            value = static_cast<double>(classes - 1);
            for (i64 c = 0; c < classes; ++c) {
                left -= exp(loadAny(io.in[0], inElem, row + c) - top);
                if (left < 0) {
                    value = static_cast<double>(c);
                    break;
                }
            }
        }
        storeAny(io.out[0], elem, i, value);
    }
};

/// Dropout with its ratio and training_mode read at run time: in training mode an element is
/// kept when its uniform draw is at least the ratio, and scaled by 1 / (1 - ratio); otherwise
/// (and for a ratio of 0) y = x and the mask is all true.
struct Dropout {
    Io io;
    Elem elem = Elem::F32;
    int ratioInput = -1, trainingInput = -1; ///< -1: absent (ratio 0.5, inference)
    Elem ratioElem = Elem::F32, trainingElem = Elem::Bool;
    bool mask = false;
    std::uint64_t seed = 0;
    PLACER_HD void operator()(i64 i) const {
        const double ratio = ratioInput < 0 ? 0.5 : loadAny(io.in[ratioInput], ratioElem, 0);
        const bool training =
            trainingInput >= 0 && loadAny(io.in[trainingInput], trainingElem, 0) != 0;
        const double x = loadAny(io.in[0], elem, i);
        const bool keep = !training || ratio <= 0 || uniformAt(seed, i) >= ratio;
        const double y = !training || ratio <= 0 ? x : (keep ? x / (1 - ratio) : 0.0);
        storeAny(io.out[0], elem, i, y);
        if (mask)
            storeAny(io.out[1], Elem::Bool, i, keep ? 1.0 : 0.0);
    }
};

/// BatchNormalization in training mode, one thread per channel of an [outer, channels, inner]
/// view: the batch mean and (population) variance normalise the channel, and the running mean
/// and variance outputs (when present) blend the inputs' with them by `momentum`.
struct BatchNormTraining {
    Io io;
    Elem elem[5] = {Elem::F32, Elem::F32, Elem::F32, Elem::F32, Elem::F32}; ///< per input
    Elem outElem[3] = {Elem::F32, Elem::F32, Elem::F32};
    int outputs = 1;
    i64 outer = 1, channels = 1, inner = 1;
    double epsilon = 1e-5, momentum = 0.9;
    PLACER_HD void operator()(i64 c) const {
        const double n = static_cast<double>(outer * inner);
        double sum = 0;
        for (i64 o = 0; o < outer; ++o)
            for (i64 k = 0; k < inner; ++k)
                sum += loadAny(io.in[0], elem[0], (o * channels + c) * inner + k);
        const double mean = n > 0 ? sum / n : 0;
        double squares = 0;
        for (i64 o = 0; o < outer; ++o)
            for (i64 k = 0; k < inner; ++k) {
                const double d = loadAny(io.in[0], elem[0], (o * channels + c) * inner + k) - mean;
                squares += d * d;
            }
        const double variance = n > 0 ? squares / n : 0;
        const double scale = loadAny(io.in[1], elem[1], c) / sqrt(variance + epsilon);
        const double shift = loadAny(io.in[2], elem[2], c) - mean * scale;
        for (i64 o = 0; o < outer; ++o)
            for (i64 k = 0; k < inner; ++k) {
                const i64 at = (o * channels + c) * inner + k;
                storeAny(io.out[0], outElem[0], at, loadAny(io.in[0], elem[0], at) * scale + shift);
            }
        if (outputs > 1)
            storeAny(io.out[1], outElem[1], c,
                     loadAny(io.in[3], elem[3], c) * momentum + mean * (1 - momentum));
        if (outputs > 2)
            storeAny(io.out[2], outElem[2], c,
                     loadAny(io.in[4], elem[4], c) * momentum + variance * (1 - momentum));
    }
};

/// One tensor's update by an optimiser of ai.onnx.preview.training. The node's inputs are the
/// learning rate R, the step count T, then the tensors X, their gradients G and the optimiser's
/// state (V: momentum, H: accumulated squares); each functor updates one tensor X_i.
struct Optimizer {
    enum Kind : int { Adagrad, Momentum, Nesterov, Adam };
    Io io;
    int kind = Adagrad;
    int x = 2, g = 3, v = -1, h = -1; ///< input indices
    int xOut = 0, vOut = -1, hOut = -1;
    Elem rElem = Elem::F32, tElem = Elem::I64, elem = Elem::F32;
    double alpha = 0, beta = 0, epsilon = 0, norm = 0, normPost = 0, decay = 0;
    PLACER_HD void operator()(i64 i) const {
        const double r = loadAny(io.in[0], rElem, 0);
        const double t = loadAny(io.in[1], tElem, 0);
        const double xv = loadAny(io.in[x], elem, i);
        const double gr = norm * xv + loadAny(io.in[g], elem, i); // regularised gradient
        if (kind == Adagrad) {
            const double hNew = loadAny(io.in[h], elem, i) + gr * gr;
            const double rate = r / (1 + t * decay);
            storeAny(io.out[xOut], elem, i, xv - rate * gr / (sqrt(hNew) + epsilon));
            storeAny(io.out[hOut], elem, i, hNew);
            return;
        }
        if (kind == Momentum || kind == Nesterov) {
            const double vNew = alpha * loadAny(io.in[v], elem, i) + (t > 0 ? beta : 1.0) * gr;
            const double step = kind == Momentum ? vNew : gr + alpha * vNew;
            storeAny(io.out[xOut], elem, i, xv - r * step);
            storeAny(io.out[vOut], elem, i, vNew);
            return;
        }
        // Adam, with bias correction once T > 0.
        const double vNew = alpha * loadAny(io.in[v], elem, i) + (1 - alpha) * gr;
        const double hNew = beta * loadAny(io.in[h], elem, i) + (1 - beta) * gr * gr;
        const double rate = t > 0 ? r * sqrt(1 - pow(beta, t)) / (1 - pow(alpha, t)) : r;
        const double xNew = xv - rate * vNew / (sqrt(hNew) + epsilon);
        storeAny(io.out[xOut], elem, i, (1 - normPost) * xNew);
        storeAny(io.out[vOut], elem, i, vNew);
        storeAny(io.out[hOut], elem, i, hNew);
    }
};

} // namespace placer::functors
