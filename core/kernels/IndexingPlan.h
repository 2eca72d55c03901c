// How the indexing and layout families (ir/OpSemantics.h isIndexingFamily) compute an op: a few
// steps, each a functor of kernels/IndexingFunctors.h over some elements or rows. Both backends
// run the same plan: the CPU on the host, the CUDA backend as launches on its stream.
#pragma once

#include "kernels/IndexingFunctors.h"
#include "kernels/Kernel.h"
#include "kernels/LayerFunctors.h"
#include "kernels/SignalFunctors.h"
#include "kernels/TrainingFunctors.h"

#include <variant>
#include <vector>

namespace placer {

using IndexingFunctor = std::variant<
    functors::CopyInput, functors::StridedView, functors::GatherElements, functors::ScatterElements,
    functors::GatherND, functors::ScatterND, functors::OneHot, functors::Trilu, functors::CumSum,
    functors::Hardmax, functors::TopK, functors::Resize, functors::ConvTranspose, functors::Lrn,
    functors::EyeLike, functors::InstanceNorm, functors::Quantize, functors::Mean,
    functors::ReverseSequence, functors::GridSample, functors::Einsum, functors::Recurrent,
    functors::ZeroOutput, functors::MaxUnpool, functors::Det, functors::QuantizedMatmul,
    functors::BlockQuantMatmul, functors::RmsNorm, functors::GroupQueryAttention,
    functors::RotaryEmbedding, functors::QuantizedConv, functors::RoiAlign, functors::PoolAny,
    functors::Dft, functors::Stft, functors::MelWeightMatrix, functors::TfIdf, functors::Optimizer,
    functors::Dropout, functors::BatchNormTraining, functors::Random>;

struct IndexingStep {
    IndexingFunctor op;
    std::int64_t count = 0; ///< elements, or rows for row functors
    bool rows = false;      ///< a row functor (one warp per row on a GPU)
    /// Device memory the functor keeps its per-thread state in (Recurrent, Det), which the
    /// backend allocates with the kernel, counted as the device's memory, and binds with
    /// bindScratch; 0 for the rest.
    std::int64_t scratchBytes = 0;
};

/// Whether the backends run this op with the shared functors below: the indexing families, and
/// the forms of other families their library kernels do not cover (training-mode Dropout and
/// BatchNormalization, pooling of other types than float32, MaxPool with indices).
bool runsAsSharedFunctors(const KernelSpec& spec);

/// The scratch memory the shared functors take for `spec` (the sum of its steps'
/// IndexingStep::scratchBytes); 0 for ops that do not run as shared functors.
std::int64_t indexingScratchBytes(const KernelSpec& spec);

/// The steps that compute `spec`'s op, or why it cannot be computed (a sentence the backend puts
/// after its "no kernel for" prefix).
Result<std::vector<IndexingStep>> planIndexing(const KernelSpec& spec);

/// An RNN, GRU or LSTM node's geometry, attributes and activations, as the shared functor runs
/// them (and the CPU's vectorised kernel reads them); any hidden size.
Result<functors::Recurrent> readRecurrent(const KernelSpec& spec);

/// A Resize node's geometry and modes, as the shared functor runs it (and the CPU's separable
/// float32 kernel reads it).
Result<functors::Resize> readResize(const KernelSpec& spec);

/// Points a step's functor at this run's tensors.
void bindIndexing(IndexingFunctor& op, const std::byte* const* inputs, std::size_t inputCount,
                  std::byte* const* outputs, std::size_t outputCount);

/// Points a step's functor at its scratch memory (IndexingStep::scratchBytes, aligned for
/// double); a functor without scratch ignores it.
void bindScratch(IndexingFunctor& op, std::byte* scratch);

} // namespace placer
