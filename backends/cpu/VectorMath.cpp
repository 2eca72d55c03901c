// Built with -O3 and -fno-trapping-math (core/CMakeLists.txt), without which GCC leaves these
// loops scalar.
#include "backends/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace placer::cpu::vec {

namespace {

using i64 = std::int64_t;

/// exp(x): 2^n times a polynomial on [-ln2/2, ln2/2] (Cephes' expf coefficients), in a form the
/// compiler vectorises. Inputs are clamped to where float's result is finite and normal.
inline float vectorExp(float x) {
    x = std::min(std::max(x, -87.3f), 88.3f);
    const float n = std::floor(x * 1.44269504088896341f + 0.5f);
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

} // namespace

#define PLACER_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))

PLACER_VECTOR_CLONES
void accumulateProduct(const float* __restrict x, i64 depth, const float* __restrict m, i64 ld,
                       i64 n, float* __restrict out) {
    i64 k = 0;
    // Four rows at a time, so `out` is loaded and stored once per four.
    for (; k + 4 <= depth; k += 4) {
        const float x0 = x[k], x1 = x[k + 1], x2 = x[k + 2], x3 = x[k + 3];
        const float* __restrict m0 = m + k * ld;
        const float* __restrict m1 = m0 + ld;
        const float* __restrict m2 = m1 + ld;
        const float* __restrict m3 = m2 + ld;
        for (i64 j = 0; j < n; ++j)
            out[j] += x0 * m0[j] + x1 * m1[j] + x2 * m2[j] + x3 * m3[j];
    }
    for (; k < depth; ++k) {
        const float xk = x[k];
        const float* __restrict row = m + k * ld;
        for (i64 j = 0; j < n; ++j)
            out[j] += xk * row[j];
    }
}

PLACER_VECTOR_CLONES
void weightedRows(const float* const* rows, const float* weights, int count, i64 n,
                  float* __restrict out) {
    const float* __restrict r0 = rows[0];
    const float w0 = weights[0];
    if (count == 1) {
        for (i64 j = 0; j < n; ++j)
            out[j] = w0 * r0[j];
        return;
    }
    const float* __restrict r1 = rows[1];
    const float w1 = weights[1];
    if (count == 2) {
        for (i64 j = 0; j < n; ++j)
            out[j] = w0 * r0[j] + w1 * r1[j];
        return;
    }
    const float* __restrict r2 = rows[2];
    const float w2 = weights[2];
    if (count == 3) {
        for (i64 j = 0; j < n; ++j)
            out[j] = w0 * r0[j] + w1 * r1[j] + w2 * r2[j];
        return;
    }
    const float* __restrict r3 = rows[3];
    const float w3 = weights[3];
    for (i64 j = 0; j < n; ++j)
        out[j] = w0 * r0[j] + w1 * r1[j] + w2 * r2[j] + w3 * r3[j];
}

PLACER_VECTOR_CLONES
void sigmoid(const float* in, float* out, i64 n) {
    for (i64 j = 0; j < n; ++j)
        out[j] = 1.0f / (1.0f + vectorExp(-in[j]));
}

PLACER_VECTOR_CLONES
void tanh(const float* in, float* out, i64 n) {
    for (i64 j = 0; j < n; ++j) {
        const float v = in[j];
        const float t = 1.0f - 2.0f / (vectorExp(2.0f * std::fabs(v)) + 1.0f);
        out[j] = std::copysign(t, v);
    }
}

PLACER_VECTOR_CLONES
void erf(const float* in, float* out, i64 n) {
    for (i64 j = 0; j < n; ++j) {
        const float v = in[j];
        const float a = std::fabs(v);
        // Near zero, erf's Maclaurin series to x^21 (its remainder there is below 1e-10).
        const float x2 = v * v;
        float s = 1.4807192816e-08f;
        s = s * x2 - 1.6365844691e-07f;
        s = s * x2 + 1.6462114366e-06f;
        s = s * x2 - 1.4925650358e-05f;
        s = s * x2 + 1.2055332982e-04f;
        s = s * x2 - 8.5483270235e-04f;
        s = s * x2 + 5.2239776254e-03f;
        s = s * x2 - 2.6866170645e-02f;
        s = s * x2 + 1.1283791671e-01f;
        s = s * x2 - 3.7612638903e-01f;
        s = s * x2 + 1.1283791671e+00f;
        const float series = v * s;
        // Beyond, Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7).
        const float t = 1.0f / (1.0f + 0.3275911f * a);
        float p = 1.061405429f;
        p = p * t - 1.453152027f;
        p = p * t + 1.421413741f;
        p = p * t - 0.284496736f;
        p = p * t + 0.254829592f;
        const float tail = std::copysign(1.0f - p * t * vectorExp(-a * a), v);
        out[j] = a < 0.75f ? series : tail;
    }
}

} // namespace placer::cpu::vec
