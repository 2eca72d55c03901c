// What the optimisations after placement (core/passes) tell the kernel of a node they rewrote,
// as typed fields of the node: a layout, post-ops, strided views, a packed weight layout. No
// model file carries them (readers never set them, writers never write them), so no kernel
// parses them back from text, and a model cannot forge them.
#pragma once

#include "ir/OpSemantics.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace placer {

/// One step a fused kernel applies after its own op, in order (passes/PostOpFusion.h).
struct PostOp {
    enum class Kind : std::uint8_t {
        Unary,     ///< `fn` with its parameters `alpha` and `beta`, as the unary op's kernel reads
                   ///< them (LeakyRelu: the slope; Clip: the bounds; Elu: alpha)
        Swish,     ///< x * sigmoid(x)
        Add,       ///< + the next extra input, of the output's shape
        Bias,      ///< + the next extra input, a row of the output's last extent (first only)
        BatchNorm, ///< an inference batch normalisation folded into a convolution (first
                   ///< only): reads four extra inputs (scale, shift, mean, variance); `alpha`
                   ///< is its epsilon
    };
    Kind kind = Kind::Unary;
    UnaryFn fn = UnaryFn::Relu;
    double alpha = 0, beta = 0;
    bool scaled = false, shifted = false; ///< BatchNorm: with its scale, with its shift

    /// How many extra inputs it reads.
    int extraInputs() const {
        return kind == Kind::BatchNorm ? 4 : kind == Kind::Add || kind == Kind::Bias ? 1 : 0;
    }
    bool operator==(const PostOp&) const = default;
};

/// What a pass decided for a node's kernel; empty for every node a reader made.
struct KernelHints {
    /// The node computes in channels-last (NHWC) order: inputs and output 0 have NHWC shapes
    /// (convolutions, pooling, batch normalisation; passes/ChannelsLast.h).
    bool channelsLast = false;
    /// The steps its kernel applies after its op; their operands follow the node's own inputs.
    std::vector<PostOp> postOps;
    /// A matrix product's strided views (passes/TransposeElimination.h), for A, B and its
    /// output: for an operand, the permutation that makes the operand from the value the product
    /// reads; for the output, the permutation from the product's result to the layout it writes.
    /// Empty where there is none.
    std::array<std::vector<std::int64_t>, 3> views;
    /// The layout a constant is loaded in, and its one reader reads it in (passes/WeightPacking.h):
    /// the name the device that runs it gave (Device::packedLayout); empty for the constant's own.
    std::string packedLayout;

    bool hasViews() const { return !views[0].empty() || !views[1].empty() || !views[2].empty(); }
    bool empty() const {
        return !channelsLast && postOps.empty() && !hasViews() && packedLayout.empty();
    }
    bool operator==(const KernelHints&) const = default;
};

/// The post-ops for people and tests, ";"-separated: "relu", "add;relu", "leaky_relu(0.1)",
/// "clip(0, 6)", "swish", "bias;gelu", "batch_norm(1e-05, scaled, shifted)". A printer only:
/// nothing reads this text back.
std::string describePostOps(const std::vector<PostOp>& ops);

} // namespace placer
