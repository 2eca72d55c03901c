// What the CPU kernels' AVX-512 paths share (each compiled with target("avx512f") and picked
// where the processor has it).
#pragma once

#include <immintrin.h>

namespace placer::cpu {

/// Whether this processor runs AVX-512F (asked once).
inline bool hasAvx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

/// The sum of a vector's lanes (GCC 12's _mm512_reduce_add_ps reads an undefined register the
/// compiler then warns of).
__attribute__((target("avx512f"))) inline float laneSum(__m512 v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    float sum = 0;
    for (const float lane : lanes)
        sum += lane;
    return sum;
}

} // namespace placer::cpu
