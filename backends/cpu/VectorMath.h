// Vectorised float32 loops for the CPU kernels that oneDNN has no primitive for (the recurrent
// layers' steps, Erf): compiled for AVX-512, AVX2 and the baseline ISA, the best one picked when
// the program starts, since the build itself targets the baseline.
#pragma once

#include <cstddef>
#include <cstdint>

namespace placer::cpu::vec {

/// out[j] += sum_k x[k] * m[k * ld + j] for j in [0, n): a row vector times a k-major matrix.
/// `out` must not overlap `x` or `m`.
void accumulateProduct(const float* x, std::int64_t depth, const float* m, std::int64_t ld,
                       std::int64_t n, float* out);

/// out[j] = sum_k x[k] * m[k * ld + j] for j in [0, n), overwriting `out`: a row vector times a
/// k-major matrix that is read once, eight rows at a time (eight streams from memory keep more
/// loads in flight than one, which is what a product with one row is bound by).
void rowTimesMatrix(const float* x, std::int64_t depth, const float* m, std::int64_t ld,
                    std::int64_t n, float* out);

/// rowTimesMatrix over weights packed in blocks of `width` columns, block b a row-major matrix
/// of `depth` rows at m + b * blockStride (oneDNN's BA16a64b and the like): out[j] for j in
/// [0, n), n at most a whole number of blocks past the last. A block of sixteen-column vectors
/// is summed in registers over all its rows, one stream from memory a block.
void rowTimesColumnBlocks(const float* x, std::int64_t depth, const float* m,
                          std::int64_t blockStride, std::int64_t width, std::int64_t n, float* out);

/// out[j] = sum_k x[k] * m[j * ld + k] for j in [0, n): a row vector times a matrix stored
/// transposed (n-major), as dot products four rows at a time.
void rowTimesTransposed(const float* x, std::int64_t depth, const float* m, std::int64_t ld,
                        std::int64_t n, float* out);

/// out[j] = sum_t weights[t] * rows[t][j] for j in [0, n), over `count` rows (1 to 4): a
/// separable resize's second pass.
void weightedRows(const float* const* rows, const float* weights, int count, std::int64_t n,
                  float* out);

/// Softmax over each of `rows` contiguous rows of `width` (max subtracted, exponentials summed
/// in float): out may be in.
void softmaxRows(const float* in, float* out, std::int64_t rows, std::int64_t width);

/// 16-bit floats to and from float32, n of them (rounding to nearest even; NaN stays NaN). The
/// 16-bit side is bytes, at any alignment (a constant read in place from a file may be odd).
void halfToFloat(const std::byte* in, float* out, std::int64_t n);
void bfloat16ToFloat(const std::byte* in, float* out, std::int64_t n);
void floatToHalf(const float* in, std::byte* out, std::int64_t n);
void floatToBFloat16(const float* in, std::byte* out, std::int64_t n);

/// out[j] = f(in[j]) for j in [0, n); `in` may be `out`. Within a few units in the last place
/// of float (erf within 3e-7 absolute), for every finite input; NaN stays NaN.
void sigmoid(const float* in, float* out, std::int64_t n);
void tanh(const float* in, float* out, std::int64_t n);
void erf(const float* in, float* out, std::int64_t n);

} // namespace placer::cpu::vec
