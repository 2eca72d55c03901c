// What the oneDNN kernels (DnnlKernels.cpp, DnnlConvolution.cpp, DnnlMatmul.cpp) share: memory
// descriptors, a primitive bound to a kernel's inputs and outputs, the spec a channels-last
// node's geometry is read in, the one table from unary functions to oneDNN's eltwise
// algorithms, and the post-ops a fused node applies (ir/KernelHints.h) in oneDNN's terms.
#pragma once

#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "kernels/OpGeometry.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace placer::cpu {

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;

/// Dense row-major float32 of `dims` (a scalar as one element).
memory::desc plainDesc(Dims dims);
/// A 4-D activation in NCHW dims, stored NCHW or (channels-last) NHWC.
memory::desc activationDesc(const Dims& nchw, bool channelsLast);
Dims nchwOf(const Dims& nhwc);

/// For a node the channels-last pass converted (KernelHints::channelsLast): the spec with
/// input 0 and output 0 in the NCHW dims the operator's geometry is read in.
KernelSpec nchwView(const KernelSpec& spec);
/// Whether `spec`'s shapes allow channels-last, or why not.
std::optional<std::string> channelsLastProblem(const KernelSpec& spec);
/// The spec a node's geometry is read in: a converted node's NCHW view, or why its shapes do
/// not allow channels-last.
Result<KernelSpec> geometrySpec(const KernelSpec& given);
/// geometrySpec() of a node whose kernel takes float32 alone: why not, for other types.
Result<KernelSpec> float32GeometrySpec(const KernelSpec& given);

/// A matrix product's strided view `which` (0: A, 1: B, 2: its output; KernelHints::views), or
/// nothing where it has none.
std::optional<Dims> matmulView(const KernelSpec& spec, std::size_t which);

/// Attributes with a user-managed scratchpad (each kernel keeps its own).
dnnl::primitive_attr scratchpadAttr();

/// A oneDNN primitive with its arguments bound to the kernel's inputs and outputs.
class DnnlKernel final : public Kernel {
public:
    DnnlKernel(std::string implementation, CpuKernelContext& ctx, dnnl::primitive primitive,
               const memory::desc& scratchpad);
    /// Binds argument `arg` to input `index` (or output `-index - 1`) viewed as `desc`.
    void bind(int arg, int index, const memory::desc& desc);
    void run(const std::byte* const* inputs, std::byte* const* outputs) override;
    std::string implementation() const override { return m_implementation; }

private:
    std::string m_implementation;
    CpuKernelContext& m_ctx;
    dnnl::primitive m_primitive;
    std::vector<std::pair<int, int>> m_bindings;
    std::unordered_map<int, memory> m_args;
};

/// "onednn:convolution:jit:avx2".
std::string implName(const char* primitive, const dnnl::primitive_desc_base& pd);
/// Whether oneDNN fell back to its reference implementation: slow loops over every index, which
/// the plain kernels beat wherever they exist.
bool isReference(const dnnl::primitive_desc_base& pd);

template <typename Primitive>
std::unique_ptr<DnnlKernel> dnnlKernel(const char* name, CpuKernelContext& ctx,
                                       const typename Primitive::primitive_desc& pd) {
    return std::make_unique<DnnlKernel>(implName(name, pd), ctx, Primitive(pd),
                                        pd.scratchpad_desc());
}

bool allFloat32(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> needFloat32(const KernelSpec& spec);
/// Dilations as oneDNN counts them, from 0.
Dims minusOne(Dims dims);

/// A unary function as oneDNN's eltwise algorithm, with `alpha` and `beta` as the unary op's
/// kernel reads its parameters (ir/OpSemantics.h): the one table for element-wise kernels and
/// post-ops alike. Nothing for a function oneDNN has no algorithm for.
struct Eltwise {
    algorithm algo;
    float alpha = 0, beta = 0;
};
std::optional<Eltwise> dnnlEltwise(UnaryFn fn, float alpha, float beta);

/// One post-op of a fused node in oneDNN's terms: an eltwise algorithm with its alpha and beta,
/// or a binary add of the next extra input (of the output's shape, or a bias row), or a batch
/// normalisation folded into a convolution.
struct DnnlPostOp {
    PostOp::Kind kind = PostOp::Kind::Unary;
    Eltwise eltwise{algorithm::eltwise_relu};
    float epsilon = 0;                    ///< BatchNorm
    bool scaled = false, shifted = false; ///< BatchNorm

    bool add() const { return kind == PostOp::Kind::Add; }
    bool bias() const { return kind == PostOp::Kind::Bias; }
    bool batchNorm() const { return kind == PostOp::Kind::BatchNorm; }
    bool binary() const { return add() || bias(); }
};
/// The post-ops of a fused node (KernelHints::postOps), or why they cannot run here.
Result<std::vector<DnnlPostOp>> dnnlPostOps(const KernelSpec& spec);

/// The spec without a fused node's extra inputs (the residual operands at the end).
KernelSpec withoutExtraInputs(const KernelSpec& spec, std::size_t extra);
/// How many extra inputs the post-ops read.
std::size_t extraInputs(const std::vector<DnnlPostOp>& ops);

/// Post-ops oneDNN would not fuse into a primitive, run after it in place on its output:
/// element-wise, or binary with an extra input (of the output's shape, or broadcast).
class PostOpsAfter {
public:
    /// Appends `op` on an output of `dst`; a binary one reads input `input` seen as `operand`.
    /// Returns the implementation's name.
    std::string append(CpuKernelContext& ctx, const DnnlPostOp& op, const memory::desc& dst,
                       int input, const memory::desc& operand);
    /// Runs every post-op on `dst` (bound to the output already).
    void run(dnnl::stream& s, const memory& dst, const std::byte* const* inputs);
    bool empty() const { return m_after.empty(); }

private:
    struct After {
        dnnl::primitive primitive;
        memory scratchpad;
        int input = -1;
        memory operand;
    };
    std::vector<After> m_after;
};

} // namespace placer::cpu
