// Built with -O3 and -fno-trapping-math (core/CMakeLists.txt), without which GCC leaves these
// loops scalar.
#include "backends/cpu/VectorMath.h"

#include "backends/cpu/Avx512.h"

#include "kernels/ElementFunctors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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
    // A NaN input stays NaN through p; its exponent is taken as 0, as converting NaN to an
    // integer is undefined.
    const std::int32_t bits = (static_cast<std::int32_t>(n == n ? n : 0.0f) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

} // namespace

#define PLACER_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))

// GCC 12 warns of the undefined registers its own AVX-512 intrinsics pass through (its bug
// 105593); nothing of this code's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

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

namespace {

/// rowTimesMatrix for the CPUs without AVX-512, as the compiler vectorises it.
__attribute__((target_clones("avx2,fma", "default"))) void
rowTimesMatrixPortable(const float* __restrict x, i64 depth, const float* __restrict m, i64 ld,
                       i64 n, float* __restrict out) {
    std::fill(out, out + n, 0.0f);
    i64 k = 0;
    for (; k + 8 <= depth; k += 8) {
        const float* __restrict r = m + k * ld;
        const float* xs = x + k;
        for (i64 j = 0; j < n; ++j)
            out[j] += ((xs[0] * r[j] + xs[1] * r[ld + j]) +
                       (xs[2] * r[2 * ld + j] + xs[3] * r[3 * ld + j])) +
                      ((xs[4] * r[4 * ld + j] + xs[5] * r[5 * ld + j]) +
                       (xs[6] * r[6 * ld + j] + xs[7] * r[7 * ld + j]));
    }
    for (; k < depth; ++k) {
        const float xk = x[k];
        const float* __restrict row = m + k * ld;
        for (i64 j = 0; j < n; ++j)
            out[j] += xk * row[j];
    }
}

/// With AVX-512: eight rows of the matrix a pass, sixteen columns a vector, the columns past
/// the last whole vector under a mask.
__attribute__((target("avx512f"))) void rowTimesMatrix512(const float* x, i64 depth, const float* m,
                                                          i64 ld, i64 n, float* out) {
    std::fill(out, out + n, 0.0f);
    const __mmask16 tail = static_cast<__mmask16>((1u << (n % 16)) - 1);
    const i64 whole = n - n % 16;
    i64 k = 0;
    for (; k + 8 <= depth; k += 8) {
        __m512 xs[8];
        for (int r = 0; r < 8; ++r)
            xs[r] = _mm512_set1_ps(x[k + r]);
        const float* rows = m + k * ld;
        for (i64 j = 0; j < whole; j += 16) {
            __m512 a = _mm512_loadu_ps(out + j);
            __m512 b = _mm512_mul_ps(xs[1], _mm512_loadu_ps(rows + ld + j));
            a = _mm512_fmadd_ps(xs[0], _mm512_loadu_ps(rows + j), a);
            b = _mm512_fmadd_ps(xs[3], _mm512_loadu_ps(rows + 3 * ld + j), b);
            a = _mm512_fmadd_ps(xs[2], _mm512_loadu_ps(rows + 2 * ld + j), a);
            b = _mm512_fmadd_ps(xs[5], _mm512_loadu_ps(rows + 5 * ld + j), b);
            a = _mm512_fmadd_ps(xs[4], _mm512_loadu_ps(rows + 4 * ld + j), a);
            b = _mm512_fmadd_ps(xs[7], _mm512_loadu_ps(rows + 7 * ld + j), b);
            a = _mm512_fmadd_ps(xs[6], _mm512_loadu_ps(rows + 6 * ld + j), a);
            _mm512_storeu_ps(out + j, _mm512_add_ps(a, b));
        }
        if (tail) {
            __m512 a = _mm512_maskz_loadu_ps(tail, out + whole);
            for (int r = 0; r < 8; ++r)
                a = _mm512_fmadd_ps(xs[r], _mm512_maskz_loadu_ps(tail, rows + r * ld + whole), a);
            _mm512_mask_storeu_ps(out + whole, tail, a);
        }
    }
    for (; k < depth; ++k) {
        const __m512 xk = _mm512_set1_ps(x[k]);
        const float* row = m + k * ld;
        for (i64 j = 0; j < whole; j += 16)
            _mm512_storeu_ps(
                out + j, _mm512_fmadd_ps(xk, _mm512_loadu_ps(row + j), _mm512_loadu_ps(out + j)));
        if (tail)
            _mm512_mask_storeu_ps(out + whole, tail,
                                  _mm512_fmadd_ps(xk, _mm512_maskz_loadu_ps(tail, row + whole),
                                                  _mm512_maskz_loadu_ps(tail, out + whole)));
    }
}

} // namespace

void rowTimesMatrix(const float* x, i64 depth, const float* m, i64 ld, i64 n, float* out) {
    (hasAvx512() ? rowTimesMatrix512 : rowTimesMatrixPortable)(x, depth, m, ld, n, out);
}

namespace {

/// A block of 64 columns (four vectors) summed in registers over all its rows, two rows a pass
/// into two sets of sums, the next rows prefetched.
__attribute__((target("avx512f"))) void block64Times512(const float* x, i64 depth, const float* m,
                                                        float* out) {
    __m512 a[4], b[4];
    for (int v = 0; v < 4; ++v)
        a[v] = b[v] = _mm512_setzero_ps();
    i64 k = 0;
    for (; k + 2 <= depth; k += 2) {
        const float* r = m + k * 64;
        _mm_prefetch(reinterpret_cast<const char*>(r + 1024), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(r + 1088), _MM_HINT_T0);
        const __m512 x0 = _mm512_set1_ps(x[k]), x1 = _mm512_set1_ps(x[k + 1]);
        for (int v = 0; v < 4; ++v) {
            a[v] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(r + 16 * v), a[v]);
            b[v] = _mm512_fmadd_ps(x1, _mm512_loadu_ps(r + 64 + 16 * v), b[v]);
        }
    }
    if (k < depth) {
        const __m512 x0 = _mm512_set1_ps(x[k]);
        for (int v = 0; v < 4; ++v)
            a[v] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(m + k * 64 + 16 * v), a[v]);
    }
    for (int v = 0; v < 4; ++v)
        _mm512_storeu_ps(out + 16 * v, _mm512_add_ps(a[v], b[v]));
}

} // namespace

void rowTimesColumnBlocks(const float* x, i64 depth, const float* m, i64 blockStride, i64 width,
                          i64 n, float* out) {
    const bool registers = width == 64 && hasAvx512();
    for (i64 j = 0, block = 0; j < n; j += width, ++block) {
        const float* matrix = m + block * blockStride;
        if (registers && j + 64 <= n)
            block64Times512(x, depth, matrix, out + j);
        else
            rowTimesMatrix(x, depth, matrix, width, std::min(width, n - j), out + j);
    }
}

namespace {

constexpr int kLanes = 16;

/// Sums of x[k] * row_r[k] in kLanes partial sums per row (lane l takes k = l mod kLanes), so
/// that the loop vectorises without reassociating a reduction.
template <int Rows>
inline void dotLanes(const float* __restrict x, i64 depth, const float* const* rows,
                     float (&lanes)[Rows][kLanes]) {
    for (int r = 0; r < Rows; ++r)
        for (int l = 0; l < kLanes; ++l)
            lanes[r][l] = 0;
    const i64 whole = depth - depth % kLanes;
    for (i64 k = 0; k < whole; k += kLanes) {
        for (int r = 0; r < Rows; ++r) {
            const float* __restrict row = rows[r] + k;
            for (int l = 0; l < kLanes; ++l)
                lanes[r][l] += x[k + l] * row[l];
        }
    }
    for (i64 k = whole; k < depth; ++k)
        for (int r = 0; r < Rows; ++r)
            lanes[r][k - whole] += x[k] * rows[r][k];
}

} // namespace

namespace {

__attribute__((target_clones("avx2,fma", "default"))) void
rowTimesTransposedPortable(const float* __restrict x, i64 depth, const float* __restrict m, i64 ld,
                           i64 n, float* __restrict out) {
    i64 j = 0;
    for (; j + 4 <= n; j += 4) {
        const float* rows[4] = {m + j * ld, m + (j + 1) * ld, m + (j + 2) * ld, m + (j + 3) * ld};
        float lanes[4][kLanes];
        dotLanes<4>(x, depth, rows, lanes);
        for (int r = 0; r < 4; ++r) {
            float sum = 0;
            for (int l = 0; l < kLanes; ++l)
                sum += lanes[r][l];
            out[j + r] = sum;
        }
    }
    for (; j < n; ++j) {
        const float* rows[1] = {m + j * ld};
        float lanes[1][kLanes];
        dotLanes<1>(x, depth, rows, lanes);
        float sum = 0;
        for (int l = 0; l < kLanes; ++l)
            sum += lanes[0][l];
        out[j] = sum;
    }
}

/// `Rows` dot products of x with the rows of m from row j on, with AVX-512: the depth past the
/// last whole vector under a mask.
template <int Rows>
__attribute__((target("avx512f"))) inline void dots512(const float* x, i64 depth, const float* m,
                                                       i64 ld, float* out) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (depth % 16)) - 1);
    const i64 whole = depth - depth % 16;
    __m512 acc[Rows];
    for (int r = 0; r < Rows; ++r)
        acc[r] = _mm512_setzero_ps();
    for (i64 k = 0; k < whole; k += 16) {
        const __m512 xv = _mm512_loadu_ps(x + k);
        for (int r = 0; r < Rows; ++r)
            acc[r] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(m + r * ld + k), acc[r]);
    }
    if (tail) {
        const __m512 xv = _mm512_maskz_loadu_ps(tail, x + whole);
        for (int r = 0; r < Rows; ++r)
            acc[r] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, m + r * ld + whole), acc[r]);
    }
    for (int r = 0; r < Rows; ++r)
        out[r] = laneSum(acc[r]);
}

/// With AVX-512: eight dot products a pass.
__attribute__((target("avx512f"))) void
rowTimesTransposed512(const float* x, i64 depth, const float* m, i64 ld, i64 n, float* out) {
    i64 j = 0;
    for (; j + 8 <= n; j += 8)
        dots512<8>(x, depth, m + j * ld, ld, out + j);
    for (; j < n; ++j)
        dots512<1>(x, depth, m + j * ld, ld, out + j);
}

} // namespace

void rowTimesTransposed(const float* x, i64 depth, const float* m, i64 ld, i64 n, float* out) {
    (hasAvx512() ? rowTimesTransposed512 : rowTimesTransposedPortable)(x, depth, m, ld, n, out);
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
void softmaxRows(const float* in, float* out, i64 rows, i64 width) {
    for (i64 r = 0; r < rows; ++r) {
        const float* x = in + r * width;
        float* y = out + r * width;
        float top = -INFINITY;
        for (i64 j = 0; j < width; ++j)
            top = std::max(top, x[j]);
        if (std::isinf(top)) {
            // Every element -inf (a row masked whole) or one +inf: what exp(x - max) gives.
            for (i64 j = 0; j < width; ++j)
                y[j] = std::exp(x[j] - top);
        } else {
            for (i64 j = 0; j < width; ++j) {
                const float d = x[j] - top;
                y[j] = d < -87.0f ? 0.0f : vectorExp(d); // below float's least normal: 0
            }
        }
        float sum = 0;
        for (i64 j = 0; j < width; ++j)
            sum += y[j];
        const float scale = 1.0f / sum;
        for (i64 j = 0; j < width; ++j)
            y[j] *= scale;
    }
}

namespace {

/// The 16-bit value at element j of `bytes`, and stored there.
inline std::uint16_t load16(const std::byte* bytes, i64 j) {
    std::uint16_t v;
    std::memcpy(&v, bytes + 2 * j, 2);
    return v;
}
inline void store16(std::byte* bytes, i64 j, std::uint16_t v) {
    std::memcpy(bytes + 2 * j, &v, 2);
}

__attribute__((target("avx512f"))) void halfToFloat512(const std::byte* in, float* out, i64 n) {
    i64 j = 0;
    for (; j + 16 <= n; j += 16)
        _mm512_storeu_ps(out + j, _mm512_cvtph_ps(_mm256_loadu_si256(
                                      reinterpret_cast<const __m256i*>(in + 2 * j))));
    for (; j < n; ++j)
        out[j] = functors::halfToFloat(load16(in, j));
}

__attribute__((target("avx512f"))) void floatToHalf512(const float* in, std::byte* out, i64 n) {
    i64 j = 0;
    for (; j + 16 <= n; j += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * j),
                            _mm512_cvtps_ph(_mm512_loadu_ps(in + j), _MM_FROUND_TO_NEAREST_INT));
    for (; j < n; ++j)
        store16(out, j, functors::floatToHalf(in[j]));
}

} // namespace

void halfToFloat(const std::byte* in, float* out, i64 n) {
    if (hasAvx512()) {
        halfToFloat512(in, out, n);
        return;
    }
    for (i64 j = 0; j < n; ++j)
        out[j] = functors::halfToFloat(load16(in, j));
}

void floatToHalf(const float* in, std::byte* out, i64 n) {
    if (hasAvx512()) {
        floatToHalf512(in, out, n);
        return;
    }
    for (i64 j = 0; j < n; ++j)
        store16(out, j, functors::floatToHalf(in[j]));
}

PLACER_VECTOR_CLONES
void bfloat16ToFloat(const std::byte* __restrict in, float* __restrict out, i64 n) {
    for (i64 j = 0; j < n; ++j) {
        const std::uint32_t bits = static_cast<std::uint32_t>(load16(in, j)) << 16;
        std::memcpy(out + j, &bits, 4);
    }
}

PLACER_VECTOR_CLONES
void floatToBFloat16(const float* __restrict in, std::byte* __restrict out, i64 n) {
    for (i64 j = 0; j < n; ++j) {
        std::uint32_t bits;
        std::memcpy(&bits, in + j, 4);
        const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
        const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
        store16(out, j, static_cast<std::uint16_t>(nan ? (bits >> 16) | 0x40u : rounded));
    }
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

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

} // namespace placer::cpu::vec
