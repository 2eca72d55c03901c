// ONNX Runtime's MatMulNBits (com.microsoft): Y = A x dequantize(B)^T (+ bias). B holds N rows
// of K codes of `bits` bits in blocks of block_size along K (the last block zero-padded), packed
// low bits first; each block has a scale and a zero point (packed codes like B's, or floats; by
// default the middle code, 2^(bits-1)), and a code stands for (code - zero point) * scale.
//
// The weights stay in their codes: each row of B is decoded as the product reads it, never into
// a float32 copy of the whole matrix. With AVX-512 and 4-bit blocks of a multiple of 32, codes
// are dequantized in vector registers and accumulated over the whole row (one horizontal sum a
// row); otherwise a block is decoded to floats and costs its dot product with A's row and one
// multiply-add, the row's block sums precomputed: sum_i (c_i - z) s a_i = s sum_i c_i a_i -
// z s sum_i a_i.
#include "backends/cpu/Avx512.h"
#include "backends/cpu/KernelUtil.h"
#include "kernels/OpGeometry.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

// GCC 12 warns of the undefined registers its own AVX-512 intrinsics pass through (its bug
// 105593); nothing of this code's.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

using geometry::BlockQuant;

/// The codes of block `b` of row `n`, as floats, into `out` (blockSize of them).
void decodeBlock(const std::uint8_t* blob, int bits, i64 count, float* out) {
    if (bits == 4) {
        for (i64 j = 0; j < count / 2; ++j) {
            out[2 * j] = static_cast<float>(blob[j] & 0xF);
            out[2 * j + 1] = static_cast<float>(blob[j] >> 4);
        }
        return;
    }
    if (bits == 8) {
        for (i64 j = 0; j < count; ++j)
            out[j] = static_cast<float>(blob[j]);
        return;
    }
    const int perByte = 8 / bits;
    const unsigned mask = (1u << bits) - 1;
    for (i64 j = 0; j < count; ++j)
        out[j] = static_cast<float>((blob[j / perByte] >> ((j % perByte) * bits)) & mask);
}

/// One row of B's 4-bit codes dequantized and dotted with a row of A, with AVX-512: each block's
/// codes become (code - zero) * scale = code * scale + (-zero * scale) in the vector registers,
/// accumulated into two vectors over the whole row, summed once at its end. `a` holds A's row
/// 32 values at a time, the 16 at even positions, then the 16 at odd (the codes' order in their
/// bytes); `scales` and `offsets` (-zero * scale) are the row's, per block.
__attribute__((target("avx512f"))) float rowDot4Bit512(const std::uint8_t* codes,
                                                       const float* scales, const float* offsets,
                                                       const float* a, i64 blocks,
                                                       i64 groupsPerBlock) {
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
    const __m512i low = _mm512_set1_epi32(0xF);
    for (i64 b = 0; b < blocks; ++b) {
        const __m512 scale = _mm512_set1_ps(scales[b]);
        const __m512 offset = _mm512_set1_ps(offsets[b]);
        for (i64 g = 0; g < groupsPerBlock; ++g) {
            const __m512i bytes =
                _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
            const __m512 even =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(bytes, low)), scale, offset);
            const __m512 odd =
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(bytes, 4)), scale, offset);
            lo = _mm512_fmadd_ps(even, _mm512_loadu_ps(a), lo);
            hi = _mm512_fmadd_ps(odd, _mm512_loadu_ps(a + 16), hi);
            codes += 16;
            a += 32;
        }
    }
    return laneSum(_mm512_add_ps(lo, hi));
}

class MatMulNBitsKernel final : public Kernel {
public:
    /// `scales` and `zeros`: the constants' bytes when they are constants (known at load), so
    /// that each block's -zero * scale is worked out once.
    MatMulNBitsKernel(BlockQuant q, const TensorData* scales, const TensorData* zeros) : m_q(q) {
        m_fast = q.bits == 4 && q.blockSize % 32 == 0 && hasAvx512();
        if (scales && (q.zeros < 0 || zeros)) {
            // Constants may be read in place from a file, at any alignment: copied first.
            std::vector<float> values(scales->size() / sizeof(float));
            std::memcpy(values.data(), scales->data(), values.size() * sizeof(float));
            std::vector<std::byte> points(zeros ? zeros->size() : 0);
            if (zeros)
                std::memcpy(points.data(), zeros->data(), points.size());
            offsetsOf(values.data(), zeros ? points.data() : nullptr);
            m_constantOffsets = true;
        }
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const BlockQuant& q = m_q;
        const auto* a = reinterpret_cast<const float*>(inputs[0]);
        const auto* codes = reinterpret_cast<const std::uint8_t*>(inputs[1]);
        const auto* scales = reinterpret_cast<const float*>(inputs[2]);
        const std::byte* zeros = q.zeros >= 0 ? inputs[q.zeros] : nullptr;
        const auto* bias = q.bias >= 0 ? reinterpret_cast<const float*>(inputs[q.bias]) : nullptr;
        auto* y = reinterpret_cast<float*>(outputs[0]);
        const i64 padded = q.blocks * q.blockSize;
        // Per row of A: its values zero-padded to whole blocks (in even/odd order per 32 for the
        // 4-bit path), and its block sums.
        m_a.assign(static_cast<std::size_t>(q.rows * padded), 0.0f);
        m_sums.assign(static_cast<std::size_t>(q.rows * q.blocks), 0.0f);
        for (i64 r = 0; r < q.rows; ++r) {
            float* row = m_a.data() + r * padded;
            const float* in = a + r * q.k;
            if (m_fast) {
                for (i64 i = 0; i < q.k; ++i) {
                    const i64 group = i / 32, at = i % 32;
                    row[group * 32 + (at % 2) * 16 + at / 2] = in[i];
                }
            } else {
                std::copy(in, in + q.k, row);
            }
            for (i64 b = 0; b < q.blocks; ++b) {
                float sum = 0;
                for (i64 i = b * q.blockSize; i < std::min(q.k, (b + 1) * q.blockSize); ++i)
                    sum += in[i];
                m_sums[static_cast<std::size_t>(r * q.blocks + b)] = sum;
            }
        }
        const int threads = std::max(1, omp_get_max_threads());
        const bool parallel = threads > 1 && q.n * q.k * q.rows >= (1 << 18);
        if (!m_constantOffsets)
            offsetsOf(scales, zeros);
#pragma omp parallel for num_threads(threads) if (parallel)
        for (i64 n = 0; n < q.n; ++n) {
            thread_local std::vector<float> decoded;
            decoded.resize(static_cast<std::size_t>(q.blockSize));
            const float* rowScales = scales + n * q.blocks;
            const float* offsets = m_offsets.data() + n * q.blocks;
            const std::uint8_t* rowCodes = codes + n * q.blocks * q.blobBytes;
            if (m_fast) {
                for (i64 r = 0; r < q.rows; ++r)
                    y[r * q.n + n] =
                        rowDot4Bit512(rowCodes, rowScales, offsets, m_a.data() + r * padded,
                                      q.blocks, q.blockSize / 32);
            } else {
                for (i64 r = 0; r < q.rows; ++r)
                    y[r * q.n + n] = 0;
                for (i64 b = 0; b < q.blocks; ++b) {
                    decodeBlock(rowCodes + b * q.blobBytes, q.bits, q.blockSize, decoded.data());
                    for (i64 r = 0; r < q.rows; ++r) {
                        const float* row = m_a.data() + r * padded + b * q.blockSize;
                        float dot = 0;
                        for (i64 i = 0; i < q.blockSize; ++i)
                            dot += decoded[static_cast<std::size_t>(i)] * row[i];
                        // sum_i (c_i - z) s a_i = s sum_i c_i a_i - z s sum_i a_i
                        y[r * q.n + n] +=
                            rowScales[b] * dot +
                            offsets[b] * m_sums[static_cast<std::size_t>(r * q.blocks + b)];
                    }
                }
            }
            if (bias) {
                for (i64 r = 0; r < q.rows; ++r)
                    y[r * q.n + n] += bias[n];
            }
        }
    }

    std::string implementation() const override {
        return std::string("block codes:") + std::to_string(m_q.bits) + "-bit" +
               (m_fast ? " avx512" : "");
    }

private:
    /// Each block's -zero * scale, into m_offsets. Packed zero points are codes like B's, each
    /// row of N in whole bytes; none is the middle code.
    void offsetsOf(const float* scales, const std::byte* zeros) {
        const BlockQuant& q = m_q;
        m_offsets.resize(static_cast<std::size_t>(q.n * q.blocks));
        const i64 perByte = 8 / q.bits;
        const i64 rowBytes = (q.blocks + perByte - 1) / perByte;
        const unsigned mask = (1u << q.bits) - 1;
        for (i64 n = 0; n < q.n; ++n) {
            // No zero points: no row of them either (an offset from null is undefined).
            const auto* bytes =
                zeros ? reinterpret_cast<const std::uint8_t*>(zeros) + n * rowBytes : nullptr;
            for (i64 b = 0; b < q.blocks; ++b) {
                float zero = static_cast<float>(1 << (q.bits - 1));
                if (zeros && q.packedZeros)
                    zero =
                        static_cast<float>((bytes[b / perByte] >> ((b % perByte) * q.bits)) & mask);
                else if (zeros)
                    zero = reinterpret_cast<const float*>(zeros)[n * q.blocks + b];
                m_offsets[static_cast<std::size_t>(n * q.blocks + b)] =
                    -zero * scales[n * q.blocks + b];
            }
        }
    }

    BlockQuant m_q;
    bool m_fast = false;
    bool m_constantOffsets = false;
    std::vector<float> m_a, m_sums, m_offsets;
};

} // namespace

Result<std::unique_ptr<Kernel>> makeMatMulNBits(const KernelSpec& spec) {
    geometry::BlockQuant q;
    if (auto problem = geometry::readBlockQuant(spec, &q))
        return specError(spec, *problem);
    const auto constant = [&](int input) -> const TensorData* {
        const auto at = static_cast<std::size_t>(input);
        return input >= 0 && at < spec.constantData.size() ? spec.constantData[at] : nullptr;
    };
    return std::unique_ptr<Kernel>(
        std::make_unique<MatMulNBitsKernel>(q, constant(2), constant(q.zeros)));
}

} // namespace placer::cpu

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
