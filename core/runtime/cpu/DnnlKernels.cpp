// CPU kernels built on oneDNN: convolution, matrix products, pooling, batch and layer
// normalisation, softmax, and the element-wise, binary and reduction ops it has algorithms for.
// Primitives are created when the kernel is prepared (at load time); running binds pointers.
// Every primitive uses a scratchpad of its own, so contexts can run at the same time.
#include "runtime/OpGeometry.h"
#include "runtime/Optimize.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/KernelUtil.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

namespace placer::cpu {

using namespace geometry;

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dt = dnnl::memory::data_type;

memory::desc plainDesc(Dims dims) {
    if (dims.empty())
        dims = {1};
    return memory::desc(dims, dt::f32, contiguousStrides(dims));
}

/// A 4-D activation in NCHW dims, stored NCHW or (channels-last) NHWC.
memory::desc activationDesc(const Dims& nchw, bool channelsLast) {
    if (!channelsLast)
        return plainDesc(nchw);
    return memory::desc(nchw, dt::f32, memory::format_tag::nhwc);
}

Dims nchwOf(const Dims& nhwc) {
    return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
}

/// For a node the channels-last pass converted (runtime/Optimize.h): the spec with input 0 and
/// output 0 in the NCHW dims the operator's geometry is read in.
KernelSpec nchwView(const KernelSpec& spec) {
    KernelSpec view = spec;
    view.inputs[0].shape = nchwOf(spec.inputs[0].shape);
    view.outputs[0].shape = nchwOf(spec.outputs[0].shape);
    return view;
}

/// Whether `spec` is a converted node, and whether its shapes allow it.
std::optional<std::string> channelsLastProblem(const KernelSpec& spec) {
    if (spec.inputs.empty() || spec.outputs.size() != 1 || spec.inputs[0].rank() != 4 ||
        spec.outputs[0].rank() != 4 || spec.inputs[0].dtype != DType::Float32 ||
        spec.outputs[0].dtype != DType::Float32)
        return "channels-last (NHWC) needs 4-D float32 data";
    return std::nullopt;
}

/// The spec a node's geometry is read in: a converted node's NCHW view, or why its shapes do
/// not allow channels-last.
Result<KernelSpec> geometrySpec(const KernelSpec& given) {
    if (!isChannelsLast(*given.node))
        return given;
    if (auto problem = channelsLastProblem(given))
        return specError(given, *problem);
    return nchwView(given);
}

dnnl::primitive_attr scratchpadAttr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

/// A oneDNN primitive with its arguments bound to the kernel's inputs and outputs.
class DnnlKernel final : public Kernel {
public:
    DnnlKernel(std::string implementation, CpuKernelContext& ctx, dnnl::primitive primitive,
               const memory::desc& scratchpad)
        : m_implementation(std::move(implementation)), m_ctx(ctx),
          m_primitive(std::move(primitive)) {
        if (scratchpad.get_size() > 0)
            m_args[DNNL_ARG_SCRATCHPAD] = memory(scratchpad, ctx.engine);
    }

    /// Binds argument `arg` to input `index` (or output `-index - 1`) viewed as `desc`.
    void bind(int arg, int index, const memory::desc& desc) {
        m_bindings.push_back({arg, index});
        m_args[arg] = memory(desc, m_ctx.engine, nullptr);
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        for (const auto& [arg, index] : m_bindings) {
            void* data = index >= 0 ? const_cast<std::byte*>(inputs[index]) : outputs[-index - 1];
            m_args[arg].set_data_handle(data);
        }
        m_primitive.execute(m_ctx.stream, m_args);
        m_ctx.stream.wait();
    }

    std::string implementation() const override { return m_implementation; }

private:
    std::string m_implementation;
    CpuKernelContext& m_ctx;
    dnnl::primitive m_primitive;
    std::vector<std::pair<int, int>> m_bindings;
    std::unordered_map<int, memory> m_args;
};

std::string implName(const char* primitive, const dnnl::primitive_desc_base& pd) {
    return std::string("onednn:") + primitive + ":" + pd.impl_info_str();
}

/// Whether oneDNN fell back to its reference implementation: slow loops over every index, which
/// the plain kernels beat wherever they exist.
bool isReference(const dnnl::primitive_desc_base& pd) {
    return std::string_view(pd.impl_info_str()).starts_with("ref");
}

template <typename Primitive>
std::unique_ptr<DnnlKernel> dnnlKernel(const char* name, CpuKernelContext& ctx,
                                       const typename Primitive::primitive_desc& pd) {
    return std::make_unique<DnnlKernel>(implName(name, pd), ctx, Primitive(pd),
                                        pd.scratchpad_desc());
}

bool allFloat32(const KernelSpec& spec) {
    for (const TensorType& t : spec.inputs) {
        if (t.dtype != DType::Float32)
            return false;
    }
    for (const TensorType& t : spec.outputs) {
        if (t.dtype != DType::Float32)
            return false;
    }
    return true;
}

Result<std::unique_ptr<Kernel>> needFloat32(const KernelSpec& spec) {
    return specError(spec, "only float32 is supported on the CPU for this operator");
}

Dims minusOne(Dims dims) {
    for (auto& d : dims)
        d -= 1; // oneDNN counts dilation from 0
    return dims;
}

// ---- post-ops ----------------------------------------------------------------------------------

/// One post-op of a fused node (runtime/Optimize.h postOpsOf): an eltwise algorithm with its
/// alpha and beta, or a binary add of the next extra input: of the output's shape ("add"), or a
/// row of the output's last extent broadcast over the rest ("bias", a matrix product's first).
struct PostOp {
    bool add = false;
    bool bias = false;
    /// A batch normalisation folded into a convolution's weights and bias ("bn:EPS:FLAGS",
    /// FLAGS 1 with its scale, 2 with its shift): reads four extra inputs, scale, shift, mean
    /// and variance. Only first.
    bool batchNorm = false;
    algorithm algo = algorithm::eltwise_relu;
    float alpha = 0, beta = 0;
};

std::optional<std::vector<PostOp>> parsePostOps(const std::string& text) {
    std::vector<PostOp> ops;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(';', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string item = text.substr(start, end - start);
        start = end + 1;
        std::vector<std::string> parts;
        for (std::size_t at = 0;;) {
            const std::size_t colon = item.find(':', at);
            parts.push_back(item.substr(at, colon == std::string::npos ? colon : colon - at));
            if (colon == std::string::npos)
                break;
            at = colon + 1;
        }
        PostOp op;
        const std::string& name = parts[0];
        auto number = [&](std::size_t k) {
            return k < parts.size() ? std::strtof(parts[k].c_str(), nullptr) : 0.0f;
        };
        op.alpha = number(1);
        op.beta = number(2);
        static const std::map<std::string, algorithm> eltwise{
            {"relu", algorithm::eltwise_relu},           {"clip", algorithm::eltwise_clip_v2},
            {"logistic", algorithm::eltwise_logistic},   {"tanh", algorithm::eltwise_tanh},
            {"hardswish", algorithm::eltwise_hardswish}, {"elu", algorithm::eltwise_elu},
            {"swish", algorithm::eltwise_swish},         {"gelu_erf", algorithm::eltwise_gelu_erf}};
        op.add = name == "add";
        op.bias = name == "bias";
        op.batchNorm = name == "bn";
        if (const auto it = eltwise.find(name); it != eltwise.end())
            op.algo = it->second;
        else if (!op.add && !op.bias && !op.batchNorm)
            return std::nullopt;
        ops.push_back(op);
    }
    return ops;
}

/// The spec without a fused node's extra inputs (the residual operands at the end).
KernelSpec withoutExtraInputs(const KernelSpec& spec, std::size_t extra) {
    KernelSpec own = spec;
    const std::size_t keep = spec.inputs.size() - extra;
    own.inputs.resize(keep);
    if (own.constantInputs.size() > keep)
        own.constantInputs.resize(keep);
    if (own.constantData.size() > keep)
        own.constantData.resize(keep);
    return own;
}

/// How many extra inputs the post-ops read.
std::size_t extraInputs(const std::vector<PostOp>& ops) {
    std::size_t count = 0;
    for (const PostOp& op : ops)
        count += op.batchNorm ? 4 : op.add || op.bias ? 1 : 0;
    return count;
}

/// Post-ops oneDNN would not fuse into a primitive, run after it in place on its output:
/// element-wise, or binary with an extra input (of the output's shape, or broadcast).
class PostOpsAfter {
public:
    /// Appends `op` on an output of `dst`; a binary one reads input `input` seen as `operand`.
    /// Returns the implementation's name.
    std::string append(CpuKernelContext& ctx, const PostOp& op, const memory::desc& dst, int input,
                       const memory::desc& operand) {
        After after;
        std::string name;
        if (op.add || op.bias) {
            dnnl::binary::primitive_desc pd(
                dnnl::binary::desc(algorithm::binary_add, dst, operand, dst), scratchpadAttr(),
                ctx.engine);
            after.primitive = dnnl::binary(pd);
            after.input = input;
            after.operand = memory(operand, ctx.engine, nullptr);
            if (pd.scratchpad_desc().get_size() > 0)
                after.scratchpad = memory(pd.scratchpad_desc(), ctx.engine);
            name = implName("binary", pd);
        } else {
            dnnl::eltwise_forward::primitive_desc pd(
                dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, op.algo, dst,
                                            op.alpha, op.beta),
                scratchpadAttr(), ctx.engine);
            after.primitive = dnnl::eltwise_forward(pd);
            if (pd.scratchpad_desc().get_size() > 0)
                after.scratchpad = memory(pd.scratchpad_desc(), ctx.engine);
            name = implName("eltwise", pd);
        }
        m_after.push_back(std::move(after));
        return name;
    }

    /// Runs every post-op on `dst` (bound to the output already).
    void run(dnnl::stream& s, const memory& dst, const std::byte* const* inputs) {
        for (After& after : m_after) {
            std::unordered_map<int, memory> a{{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}};
            if (after.input >= 0) {
                after.operand.set_data_handle(const_cast<std::byte*>(inputs[after.input]));
                a = {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, after.operand}, {DNNL_ARG_DST, dst}};
            }
            if (after.scratchpad)
                a[DNNL_ARG_SCRATCHPAD] = after.scratchpad;
            after.primitive.execute(s, a);
        }
    }

private:
    struct After {
        dnnl::primitive primitive;
        memory scratchpad;
        int input = -1;
        memory operand;
    };
    std::vector<After> m_after;
};

// ---- convolution -------------------------------------------------------------------------------

/// A convolution in oneDNN's preferred (blocked) layouts, with the model's plain layouts
/// reordered on the way in and out. Constant weights are reordered once and kept.
class ConvKernel final : public Kernel {
public:
    ConvKernel(CpuKernelContext& ctx, const dnnl::convolution_forward::primitive_desc& pd,
               const memory::desc& userSrc, const memory::desc& userWeights,
               const memory::desc& userDst, bool hasBias, bool constantWeights)
        : m_ctx(ctx), m_conv(pd), m_hasBias(hasBias), m_constantWeights(constantWeights),
          m_implementation(implName("convolution", pd)) {
        m_userSrc = memory(userSrc, ctx.engine, nullptr);
        m_userWeights = memory(userWeights, ctx.engine, nullptr);
        m_userDst = memory(userDst, ctx.engine, nullptr);
        if (pd.src_desc() != userSrc) {
            m_src = memory(pd.src_desc(), ctx.engine);
            m_srcReorder = dnnl::reorder(m_userSrc, m_src);
        }
        if (pd.weights_desc() != userWeights) {
            m_weights = memory(pd.weights_desc(), ctx.engine);
            m_weightsReorder = dnnl::reorder(m_userWeights, m_weights);
        }
        if (pd.dst_desc() != userDst) {
            m_dst = memory(pd.dst_desc(), ctx.engine);
            m_dstReorder = dnnl::reorder(m_dst, m_userDst);
        }
        if (hasBias)
            m_bias = memory(pd.bias_desc(), ctx.engine, nullptr);
        if (pd.scratchpad_desc().get_size() > 0)
            m_scratchpad = memory(pd.scratchpad_desc(), ctx.engine);
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        dnnl::stream& s = m_ctx.stream;
        m_userSrc.set_data_handle(const_cast<std::byte*>(inputs[0]));
        m_userDst.set_data_handle(outputs[0]);
        memory src = m_userSrc, weights = m_userWeights, dst = m_userDst;
        if (m_srcReorder) {
            m_srcReorder.execute(s, m_userSrc, m_src);
            src = m_src;
        }
        const void* weightsFrom = inputs[1];
        bool fresh = !m_constantWeights || m_reorderedFrom != inputs[1];
        if (m_folded) {
            // A folded batch normalisation: fold again when something it reads may change.
            if (!m_folded->constant || !m_folded->done) {
                foldBatchNorm(inputs);
                fresh = true;
            }
            weightsFrom = m_folded->weights.data();
        }
        if (m_weightsReorder) {
            // Constant weights never change: reorder them on the first run only.
            if (fresh) {
                m_userWeights.set_data_handle(const_cast<void*>(weightsFrom));
                m_weightsReorder.execute(s, m_userWeights, m_weights);
                m_reorderedFrom = inputs[1];
            }
            weights = m_weights;
        } else {
            m_userWeights.set_data_handle(const_cast<void*>(weightsFrom));
        }
        if (m_dstReorder)
            dst = m_dst;
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
        if (m_hasBias) {
            m_bias.set_data_handle(m_folded ? static_cast<void*>(m_folded->bias.data())
                                            : const_cast<std::byte*>(inputs[2]));
            args[DNNL_ARG_BIAS] = m_bias;
        }
        if (m_scratchpad)
            args[DNNL_ARG_SCRATCHPAD] = m_scratchpad;
        if (m_sumInput >= 0) {
            // The sum post-op adds what the destination holds: the residual operand first.
            const auto* operand = inputs[m_sumInput];
            if (m_dstReorder) {
                m_sumOperand.set_data_handle(const_cast<std::byte*>(operand));
                dnnl::reorder(m_sumOperand, m_dst).execute(s, m_sumOperand, m_dst);
            } else if (operand != outputs[0]) {
                std::memcpy(outputs[0], operand, m_userDst.get_desc().get_size());
            }
        }
        for (auto& [arg, input] : m_postOpInputs) {
            input.second.set_data_handle(const_cast<std::byte*>(inputs[input.first]));
            args[arg] = input.second;
        }
        m_conv.execute(s, args);
        if (m_dstReorder)
            m_dstReorder.execute(s, m_dst, m_userDst);
        m_after.run(s, m_userDst, inputs);
        s.wait();
    }

    std::string implementation() const override { return m_implementation; }

    /// The residual operand the sum post-op adds: input `input`, copied into the destination
    /// before the convolution.
    void setSumInput(int input) {
        m_sumInput = input;
        m_sumOperand = memory(m_userDst.get_desc(), m_ctx.engine, nullptr);
    }

    /// Names the post-ops oneDNN computes inside the convolution.
    void noteFused(std::size_t count) {
        m_implementation += "+" + std::to_string(count) + " post-ops";
    }

    /// A binary post-op's operand: input `input` seen as `desc`, for post-op `index`.
    void bindPostOpInput(int index, int input, const memory::desc& desc) {
        m_postOpInputs[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = {
            input, memory(desc, m_ctx.engine, nullptr)};
    }

    /// Folds a batch normalisation after the convolution into its weights and bias: per output
    /// channel c, f = scale / sqrt(variance + epsilon), w' = w f, b' = (b - mean) f + shift.
    /// `input`: the first of its four operands; `ownBias`: whether the convolution has its own
    /// (input 2); `constant`: whether everything it reads is a constant, folded once.
    void foldBatchNormFrom(int input, const PostOp& op, std::int64_t channels,
                           std::int64_t weightCount, bool ownBias, bool constant) {
        Folded folded;
        folded.input = input;
        folded.epsilon = op.alpha;
        folded.scale = (static_cast<int>(op.beta) & 1) != 0;
        folded.center = (static_cast<int>(op.beta) & 2) != 0;
        folded.ownBias = ownBias;
        folded.constant = constant;
        folded.weights.resize(static_cast<std::size_t>(weightCount));
        folded.bias.resize(static_cast<std::size_t>(channels));
        m_folded = std::move(folded);
        m_constantWeights = constant;
        m_implementation += "+batch_norm folded";
    }

    /// A post-op oneDNN would not fuse, run after the convolution in place on its output.
    void addAfter(const PostOp& op, int input) {
        const memory::desc& dst = m_userDst.get_desc();
        m_implementation += "+" + m_after.append(m_ctx, op, dst, input, dst);
    }

private:
    CpuKernelContext& m_ctx;
    dnnl::convolution_forward m_conv;
    bool m_hasBias;
    bool m_constantWeights;
    std::string m_implementation;
    memory m_userSrc, m_userWeights, m_userDst, m_bias;
    memory m_src, m_weights, m_dst, m_scratchpad;
    dnnl::reorder m_srcReorder, m_weightsReorder, m_dstReorder;
    const std::byte* m_reorderedFrom = nullptr;
    std::map<int, std::pair<int, memory>> m_postOpInputs; ///< arg: (input, its memory)
    int m_sumInput = -1;
    memory m_sumOperand;
    PostOpsAfter m_after;
    struct Folded {
        int input = -1;
        float epsilon = 0;
        bool scale = true, center = true, ownBias = false, constant = false, done = false;
        std::vector<float> weights, bias;
    };
    std::optional<Folded> m_folded;

    void foldBatchNorm(const std::byte* const* inputs) {
        Folded& f = *m_folded;
        const auto* w = reinterpret_cast<const float*>(inputs[1]);
        const auto* b = f.ownBias ? reinterpret_cast<const float*>(inputs[2]) : nullptr;
        const auto* gamma = reinterpret_cast<const float*>(inputs[f.input]);
        const auto* beta = reinterpret_cast<const float*>(inputs[f.input + 1]);
        const auto* mean = reinterpret_cast<const float*>(inputs[f.input + 2]);
        const auto* variance = reinterpret_cast<const float*>(inputs[f.input + 3]);
        const std::size_t channels = f.bias.size();
        const std::size_t each = f.weights.size() / channels;
        for (std::size_t c = 0; c < channels; ++c) {
            const float factor = (f.scale ? gamma[c] : 1.0f) / std::sqrt(variance[c] + f.epsilon);
            for (std::size_t j = 0; j < each; ++j)
                f.weights[c * each + j] = w[c * each + j] * factor;
            f.bias[c] = ((b ? b[c] : 0.0f) - mean[c]) * factor + (f.center ? beta[c] : 0.0f);
        }
        f.done = true;
    }
};

} // namespace

Result<std::unique_ptr<Kernel>> makeConvolution(const KernelSpec& fused, CpuKernelContext& ctx) {
    const auto postOps = parsePostOps(postOpsOf(*fused.node));
    if (!postOps)
        return specError(fused, "unknown post-op in '" + postOpsOf(*fused.node) + "'");
    const std::size_t extra = extraInputs(*postOps);
    if (std::any_of(postOps->begin(), postOps->end(), [](const PostOp& op) { return op.bias; }))
        return specError(fused, "a convolution takes its bias as its third input");
    if (fused.inputs.size() < extra + 2)
        return specError(fused, "fewer inputs than the post-ops read");
    const KernelSpec given = withoutExtraInputs(fused, extra);
    // A batch normalisation right after the convolution is folded into it; the rest are
    // oneDNN's post-ops.
    std::optional<PostOp> batchNorm;
    std::vector<PostOp> chain = *postOps;
    if (!chain.empty() && chain.front().batchNorm) {
        batchNorm = chain.front();
        chain.erase(chain.begin());
    }
    if (std::any_of(chain.begin(), chain.end(), [](const PostOp& op) { return op.batchNorm; }))
        return specError(fused, "a batch normalisation is folded only right after a convolution");
    const bool channelsLast = isChannelsLast(*given.node);
    if (channelsLast) {
        if (auto problem = channelsLastProblem(given); problem || !allFloat32(given))
            return specError(given, problem.value_or("channels-last needs float32 weights"));
    } else if (!allFloat32(given)) {
        if (!chain.empty() || batchNorm)
            return specError(given, "post-ops need float32");
        return makePlainConvolution(given);
    }
    const KernelSpec spec = channelsLast ? nchwView(given) : given;
    Convolution conv;
    if (auto error = readConvolution(spec, &conv))
        return specError(spec, *error);
    const Dims& in = spec.inputs[0].shape;
    const Dims& w = spec.inputs[1].shape;
    const Dims& out = spec.outputs[0].shape;
    const std::int64_t groups = conv.groups;
    const Window& window = conv.window;
    memory::desc userWeights = plainDesc(w);
    Dims groupedDims = w;
    if (groups > 1) {
        groupedDims.insert(groupedDims.begin(), groups);
        groupedDims[1] /= groups;
        userWeights = plainDesc(groupedDims);
    }
    const bool hasBias = conv.hasBias || batchNorm; // a folded normalisation adds a bias
    auto any = [](const Dims& dims) {
        return memory::desc(dims, dt::f32, memory::format_tag::any);
    };
    const memory::desc bias = hasBias ? plainDesc({out[1]}) : memory::desc();
    const memory::desc userDst = activationDesc(out, channelsLast);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         algorithm::convolution_direct, any(in), any(groupedDims),
                                         bias, any(out), window.strides, minusOne(window.dilation),
                                         window.padL, window.padR);
    // The post-ops go inside the convolution when oneDNN keeps the implementation it picks
    // without them (a binary post-op can push it off its fastest kernel): as they are, or with
    // the residual Add as a sum post-op (one Add, the destination holding its operand first).
    // Otherwise they run after it, each in place on its output.
    dnnl::convolution_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    const std::string plainImpl = pd.impl_info_str();
    enum class Fusion { After, Binary, Sum } fusion = Fusion::After;
    const auto adds =
        std::count_if(chain.begin(), chain.end(), [](const PostOp& op) { return op.add; });
    for (const Fusion tried : {Fusion::Binary, Fusion::Sum}) {
        if (chain.empty() || (tried == Fusion::Sum && adds != 1))
            continue;
        try {
            dnnl::post_ops ops;
            for (const PostOp& op : chain) {
                if (op.add && tried == Fusion::Sum)
                    ops.append_sum(1.0f);
                else if (op.add)
                    ops.append_binary(algorithm::binary_add, userDst);
                else
                    ops.append_eltwise(1.0f, op.algo, op.alpha, op.beta);
            }
            dnnl::primitive_attr attr = scratchpadAttr();
            attr.set_post_ops(ops);
            dnnl::convolution_forward::primitive_desc withOps(desc, attr, ctx.engine);
            if (withOps.impl_info_str() == plainImpl) {
                pd = withOps;
                fusion = tried;
                break;
            }
        } catch (const dnnl::error&) {
            // not supported this way
        }
    }
    const bool inside = fusion != Fusion::After;
    auto constant = [&](std::size_t k) {
        return fused.constantInputs.size() > k && fused.constantInputs[k];
    };
    auto kernel = std::make_unique<ConvKernel>(ctx, pd, activationDesc(in, channelsLast),
                                               userWeights, userDst, hasBias, constant(1));
    int operand = static_cast<int>(given.inputs.size());
    if (batchNorm) {
        const std::size_t first = given.inputs.size();
        bool allConstant = constant(1) && (!conv.hasBias || constant(2));
        for (std::size_t k = first; k < first + 4; ++k) {
            allConstant = allConstant && constant(k);
            if (fused.inputs[k].elementCount() != out[1])
                return specError(fused, "the folded batch normalisation's operands are not one "
                                        "value per output channel");
        }
        kernel->foldBatchNormFrom(operand, *batchNorm, out[1], product(w), conv.hasBias,
                                  allConstant);
        operand += 4;
    }
    for (std::size_t k = 0; k < chain.size(); ++k) {
        const PostOp& op = chain[k];
        if (inside) {
            if (op.add && fusion == Fusion::Binary)
                kernel->bindPostOpInput(static_cast<int>(k), operand++, userDst);
            else if (op.add)
                kernel->setSumInput(operand++);
            continue;
        }
        kernel->addAfter(op, op.add ? operand++ : -1);
    }
    if (inside)
        kernel->noteFused(chain.size());
    return std::unique_ptr<Kernel>(std::move(kernel));
}

// ---- matrix products ---------------------------------------------------------------------------

namespace {

/// A matrix operand's oneDNN layout, with or without a batch dimension.
memory::desc operandDesc(const MatrixOperand& op, std::int64_t batchCount, bool withBatch) {
    const std::int64_t rowStride = op.transposed ? 1 : op.cols;
    const std::int64_t colStride = op.transposed ? op.rows : 1;
    if (!withBatch)
        return memory::desc({op.rows, op.cols}, dt::f32, {rowStride, colStride});
    return memory::desc({batchCount, op.rows, op.cols}, dt::f32,
                        {batchCount == 1 ? 0 : op.matrixSize(), rowStride, colStride});
}

/// How a matrix product maps onto oneDNN calls: one call over every batch (the batches match,
/// or one weight matrix serves them all and folds into the rows), or one call per output batch.
struct MatmulCalls {
    memory::desc src, weights, dst; ///< of one call
    /// Per call, when there are several: the batch of A and of B it reads.
    std::vector<std::pair<std::int64_t, std::int64_t>> offsets;
    bool sharedWeights = false; ///< one 2-D weight matrix for every call
};

MatmulCalls matmulCalls(const MatrixProduct& mp) {
    const MatrixOperand& ma = mp.a;
    const MatrixOperand& mb = mp.b;
    const std::int64_t batches = mp.batches, m = mp.m, n = mp.n;
    const std::int64_t ba = product(ma.batch), bb = product(mb.batch);
    const bool sameBatch = ba == batches && bb == batches &&
                           broadcastShapes(ma.batch, mp.outBatch) == mp.outBatch &&
                           ma.batch.size() == mb.batch.size() && ma.batch == mb.batch;
    MatmulCalls calls;
    calls.sharedWeights = bb == 1;
    if (batches == 1 || sameBatch) {
        const bool withBatch = batches > 1;
        calls.src = operandDesc(ma, batches, withBatch);
        calls.weights = operandDesc(mb, batches, withBatch);
        calls.dst = withBatch ? plainDesc({batches, m, n}) : plainDesc({m, n});
        calls.sharedWeights = !withBatch;
    } else if (bb == 1 && !ma.transposed && ba == batches) {
        // One weight matrix for every batch: fold the batch into the rows.
        MatrixOperand folded = ma;
        folded.rows = ba * m;
        calls.src = operandDesc(folded, 1, false);
        calls.weights = operandDesc(mb, 1, false);
        calls.dst = plainDesc({ba * m, n});
    } else {
        calls.offsets = batchOffsets(ma.batch, mb.batch, mp.outBatch);
        calls.src = operandDesc(ma, 1, false);
        calls.weights = operandDesc(mb, 1, false);
        calls.dst = plainDesc({m, n});
    }
    return calls;
}

/// A row of `n` broadcast over a tensor of rank `rank`.
memory::desc rowDesc(int rank, std::int64_t n) {
    Dims dims(static_cast<std::size_t>(std::max(rank, 1)), 1);
    dims.back() = n;
    return plainDesc(dims);
}

/// A matrix product prepared: the primitive, with the bias and the post-ops placed inside it
/// where oneDNN keeps its implementation with them, else after it.
struct MatmulBuild {
    MatrixProduct mp;
    MatmulCalls calls;
    std::optional<dnnl::matmul::primitive_desc> pd;
    int biasInput = -1;    ///< the bias oneDNN adds (DNNL_ARG_BIAS), from this input
    bool loopBias = false; ///< Gemm's C added by a loop after the product (beta != 1, or not a row)
    /// Post-ops, each with the input a binary one reads (else -1): inside the primitive, or run
    /// after it on the whole output.
    std::vector<std::pair<PostOp, int>> inside, after;
};

dnnl::primitive_attr matmulAttr(const MatrixProduct& mp) {
    dnnl::primitive_attr attr = scratchpadAttr();
    if (mp.alpha != 1)
        attr.set_output_scales(0, {mp.alpha});
    return attr;
}

/// `weights`: the layout the weights are given in (a packed one, or format `any` to learn the
/// one oneDNN prefers); null for the operand's own.
Result<MatmulBuild> buildMatmul(const KernelSpec& fused, CpuKernelContext& ctx,
                                const memory::desc* weights) {
    const auto postOps = parsePostOps(postOpsOf(*fused.node));
    if (!postOps)
        return specError(fused, "unknown post-op in '" + postOpsOf(*fused.node) + "'");
    const std::size_t extra = extraInputs(*postOps);
    if (fused.inputs.size() < extra + 2)
        return specError(fused, "fewer inputs than the post-ops read");
    const KernelSpec spec = withoutExtraInputs(fused, extra);
    if (!allFloat32(fused))
        return specError(fused, "post-ops need float32");
    MatmulBuild b;
    if (auto error = readMatrixProduct(spec, &b.mp))
        return specError(spec, *error);
    const MatrixProduct& mp = b.mp;
    b.calls = matmulCalls(mp);
    const Dims& out = spec.outputs[0].shape;
    const int callRank = b.calls.dst.data.ndims;
    auto isRow = [&](const TensorType& t) {
        return t.elementCount() == mp.n && !t.shape.empty() && t.shape.back() == mp.n;
    };
    std::vector<std::pair<PostOp, int>> ops;
    int operand = static_cast<int>(spec.inputs.size());
    for (const PostOp& op : *postOps) {
        const bool binary = op.add || op.bias;
        if (op.bias && (!ops.empty() || mp.biasInput >= 0 || out.empty() || out.back() != mp.n ||
                        !isRow(fused.inputs[static_cast<std::size_t>(operand)])))
            return specError(fused, "a fused bias must come first, be a row of the output's "
                                    "last extent, and not follow Gemm's own");
        ops.emplace_back(op, binary ? operand++ : -1);
    }
    // The bias goes inside the product where oneDNN adds it as it accumulates: unscaled.
    if (!ops.empty() && ops.front().first.bias && mp.alpha == 1) {
        b.biasInput = ops.front().second;
        ops.erase(ops.begin());
    } else if (mp.biasInput >= 0) {
        if (mp.beta == 1 && mp.alpha == 1 && isRow(spec.inputs[2]))
            b.biasInput = mp.biasInput;
        else
            b.loopBias = true;
    }
    const memory::desc& weightsDesc = weights ? *weights : b.calls.weights;
    auto make = [&](const dnnl::primitive_attr& attr) {
        if (b.biasInput < 0)
            return dnnl::matmul::primitive_desc(
                dnnl::matmul::desc(b.calls.src, weightsDesc, b.calls.dst), attr, ctx.engine);
        return dnnl::matmul::primitive_desc(
            dnnl::matmul::desc(b.calls.src, weightsDesc, rowDesc(callRank, mp.n), b.calls.dst),
            attr, ctx.engine);
    };
    b.pd.emplace(make(matmulAttr(mp)));
    const bool binaries = std::any_of(ops.begin(), ops.end(),
                                      [](const auto& op) { return op.first.add || op.first.bias; });
    bool inside = false;
    if (!ops.empty() && !b.loopBias && (b.calls.offsets.empty() || !binaries)) {
        try {
            dnnl::post_ops chain;
            for (const auto& [op, input] : ops) {
                if (op.add)
                    chain.append_binary(algorithm::binary_add, b.calls.dst);
                else if (op.bias)
                    chain.append_binary(algorithm::binary_add, rowDesc(callRank, mp.n));
                else
                    chain.append_eltwise(1.0f, op.algo, op.alpha, op.beta);
            }
            dnnl::primitive_attr attr = matmulAttr(mp);
            attr.set_post_ops(chain);
            auto withOps = make(attr);
            if (std::string_view(withOps.impl_info_str()) == b.pd->impl_info_str()) {
                b.pd.emplace(withOps);
                inside = true;
            }
        } catch (const dnnl::error&) {
            // not supported this way: they run after
        }
    }
    (inside ? b.inside : b.after) = std::move(ops);
    return b;
}

/// A matrix product C[b] = A[b] x B[b] with numpy batch broadcasting, its bias (Gemm's C or a
/// fused Add) and its post-ops, its weights possibly in a layout packed at load.
class MatmulKernel final : public Kernel {
public:
    MatmulKernel(CpuKernelContext& ctx, MatmulBuild build, const KernelSpec& spec, bool packed)
        : m_ctx(ctx), m_matmul(*build.pd), m_implementation(implName("matmul", *build.pd)),
          m_calls(std::move(build.calls)), m_aStride(build.mp.a.matrixSize()),
          m_bStride(build.mp.b.matrixSize()), m_cStride(build.mp.m * build.mp.n) {
        const dnnl::matmul::primitive_desc& pd = *build.pd;
        m_a = memory(pd.src_desc(), ctx.engine, nullptr);
        m_b = memory(pd.weights_desc(), ctx.engine, nullptr);
        m_c = memory(pd.dst_desc(), ctx.engine, nullptr);
        m_args = {{DNNL_ARG_SRC, m_a}, {DNNL_ARG_WEIGHTS, m_b}, {DNNL_ARG_DST, m_c}};
        if (pd.scratchpad_desc().get_size() > 0)
            m_args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), ctx.engine);
        if (packed)
            m_implementation += "+packed weights";
        if (build.biasInput >= 0) {
            m_inputs.emplace_back(DNNL_ARG_BIAS, build.biasInput);
            m_args[DNNL_ARG_BIAS] = memory(pd.bias_desc(), ctx.engine, nullptr);
            m_implementation += "+bias";
        }
        for (std::size_t k = 0; k < build.inside.size(); ++k) {
            const int input = build.inside[k].second;
            if (input < 0)
                continue;
            const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(k)) | DNNL_ARG_SRC_1;
            m_inputs.emplace_back(arg, input);
            const memory::desc desc = build.inside[k].first.bias
                                          ? rowDesc(m_calls.dst.data.ndims, build.mp.n)
                                          : m_calls.dst;
            m_args[arg] = memory(desc, ctx.engine, nullptr);
        }
        if (!build.inside.empty())
            m_implementation += "+" + std::to_string(build.inside.size()) + " post-ops";
        const Dims& out = spec.outputs[0].shape;
        if (build.loopBias) {
            m_biasInput = build.mp.biasInput;
            m_beta = build.mp.beta;
            m_biasShape = {build.mp.m, build.mp.n}; // Gemm: 2-D
            m_biasStrides = broadcastStrides(spec.inputs[2].shape, m_biasShape);
        }
        m_out = memory(plainDesc(out), ctx.engine, nullptr);
        for (const auto& [op, input] : build.after) {
            const memory::desc operand =
                op.bias ? rowDesc(static_cast<int>(out.size()), build.mp.n) : plainDesc(out);
            m_implementation += "+" + m_after.append(ctx, op, plainDesc(out), input, operand);
        }
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        auto* a = reinterpret_cast<const float*>(inputs[0]);
        auto* b = reinterpret_cast<const float*>(inputs[1]);
        auto* c = reinterpret_cast<float*>(outputs[0]);
        for (const auto& [arg, input] : m_inputs)
            m_args[arg].set_data_handle(const_cast<std::byte*>(inputs[input]));
        if (m_calls.offsets.empty()) {
            execute(a, b, c);
        } else {
            for (std::size_t i = 0; i < m_calls.offsets.size(); ++i)
                execute(a + m_calls.offsets[i].first * m_aStride,
                        b + m_calls.offsets[i].second * m_bStride,
                        c + static_cast<std::int64_t>(i) * m_cStride);
        }
        if (m_biasInput >= 0) {
            m_ctx.stream.wait();
            const auto* bias = reinterpret_cast<const float*>(inputs[m_biasInput]);
            const float beta = m_beta;
            forEachRun<1>(m_biasShape, {m_biasStrides},
                          [&](std::int64_t o, const std::array<std::int64_t, 1>& off,
                              std::int64_t n, const std::array<std::int64_t, 1>& step) {
                              for (std::int64_t i = 0; i < n; ++i)
                                  c[o + i] += beta * bias[off[0] + i * step[0]];
                          });
        }
        m_out.set_data_handle(c);
        m_after.run(m_ctx.stream, m_out, inputs);
        m_ctx.stream.wait();
    }

    std::string implementation() const override { return m_implementation; }

    /// Names the strided views it reads or writes.
    void noteViews() { m_implementation += "+strided views"; }

private:
    void execute(const float* a, const float* b, float* c) {
        m_a.set_data_handle(const_cast<float*>(a));
        m_b.set_data_handle(const_cast<float*>(b));
        m_c.set_data_handle(c);
        m_matmul.execute(m_ctx.stream, m_args);
    }

    CpuKernelContext& m_ctx;
    dnnl::matmul m_matmul;
    std::string m_implementation;
    MatmulCalls m_calls;
    std::int64_t m_aStride, m_bStride, m_cStride;
    memory m_a, m_b, m_c, m_out;
    std::unordered_map<int, memory> m_args;
    std::vector<std::pair<int, int>> m_inputs; ///< (argument, input) bound on every run
    int m_biasInput = -1;
    float m_beta = 1;
    Dims m_biasShape, m_biasStrides;
    PostOpsAfter m_after;
};

// Packed layouts: the operand's own layout and the packed one (oneDNN memory descriptors),
// kept in this process and named in the graph by their number ("onednn-packed:N"). A name that
// is not one of them (an attribute a model brought in) is refused, never decoded.

struct PackedLayouts {
    std::mutex mutex;
    std::vector<std::pair<memory::desc, memory::desc>> layouts;
};

PackedLayouts& packedLayouts() {
    static PackedLayouts* all = new PackedLayouts();
    return *all;
}

constexpr std::string_view kPackedPrefix = "onednn-packed:";

std::string namePackedLayout(const memory::desc& own, const memory::desc& packed) {
    PackedLayouts& all = packedLayouts();
    std::lock_guard lock(all.mutex);
    for (std::size_t i = 0; i < all.layouts.size(); ++i) {
        if (all.layouts[i].first == own && all.layouts[i].second == packed)
            return std::string(kPackedPrefix) + std::to_string(i);
    }
    all.layouts.emplace_back(own, packed);
    return std::string(kPackedPrefix) + std::to_string(all.layouts.size() - 1);
}

/// The two layouts a packed layout's name stands for, or nothing when it names none.
std::optional<std::pair<memory::desc, memory::desc>> readPackedLayout(std::string_view text) {
    if (!text.starts_with(kPackedPrefix))
        return std::nullopt;
    std::size_t index = 0;
    const std::string_view digits = text.substr(kPackedPrefix.size());
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error != std::errc() || end != digits.data() + digits.size())
        return std::nullopt;
    PackedLayouts& all = packedLayouts();
    std::lock_guard lock(all.mutex);
    if (index >= all.layouts.size())
        return std::nullopt;
    return all.layouts[index];
}

/// A stored shape seen through a view's permutation: the dims and strides of the view.
std::optional<std::pair<Dims, Dims>> viewed(const Dims& stored, const std::optional<Dims>& perm) {
    const Dims own = contiguousStrides(stored);
    if (!perm)
        return std::pair{stored, own};
    if (perm->size() != stored.size())
        return std::nullopt;
    Dims dims(stored.size()), strides(stored.size());
    std::vector<bool> seen(stored.size(), false);
    for (std::size_t j = 0; j < perm->size(); ++j) {
        const std::int64_t p = (*perm)[j];
        if (p < 0 || p >= static_cast<std::int64_t>(stored.size()) || seen[p])
            return std::nullopt;
        seen[p] = true;
        dims[j] = stored[p];
        strides[j] = own[p];
    }
    return std::pair{dims, strides};
}

/// The N-D descriptors of a matrix product reading or writing strided views (runtime/Optimize.h
/// matmulViewOf), with its m, n and k.
struct ViewedProduct {
    memory::desc src, weights, dst;
    std::int64_t m = 0, n = 0, k = 0;
};

Result<ViewedProduct> viewedProduct(const KernelSpec& spec) {
    if (!allFloat32(spec) || spec.inputs.size() != 2 || !postOpsOf(*spec.node).empty())
        return specError(spec, "strided views need a float32 MatMul without post-ops");
    std::array<Dims, 2> dims, strides;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto view =
            viewed(spec.inputs[k].shape, matmulViewOf(*spec.node, static_cast<int>(k)));
        if (!view || view->first.size() < 2)
            return specError(spec, "an operand's view is not a permutation of its axes");
        std::tie(dims[k], strides[k]) = *view;
    }
    // The output: the layout written is the result transposed by q, so the result's axis q[j]
    // is stored as the written layout's axis j.
    const Dims& written = spec.outputs[0].shape;
    Dims out = written, outStrides = contiguousStrides(written);
    if (const auto q = matmulViewOf(*spec.node, 2)) {
        if (!viewed(written, *q))
            return specError(spec, "the output's view is not a permutation of its axes");
        for (std::size_t j = 0; j < q->size(); ++j) {
            out[static_cast<std::size_t>((*q)[j])] = written[j];
            outStrides[static_cast<std::size_t>((*q)[j])] = contiguousStrides(written)[j];
        }
    }
    const std::size_t rank = out.size();
    for (std::size_t k = 0; k < 2; ++k) {
        while (dims[k].size() < rank) {
            strides[k].insert(strides[k].begin(), dims[k].front() * strides[k].front());
            dims[k].insert(dims[k].begin(), 1);
        }
        if (dims[k].size() != rank)
            return specError(spec, "an operand has more dimensions than the output");
    }
    ViewedProduct product;
    product.m = dims[0][rank - 2];
    product.k = dims[0][rank - 1];
    product.n = dims[1][rank - 1];
    bool fits =
        dims[1][rank - 2] == product.k && out[rank - 2] == product.m && out[rank - 1] == product.n;
    for (std::size_t j = 0; j + 2 < rank; ++j) {
        for (std::size_t k = 0; k < 2; ++k)
            fits = fits && (dims[k][j] == out[j] || dims[k][j] == 1);
    }
    if (!fits)
        return specError(spec, "the views' shapes do not make the product's");
    product.src = memory::desc(dims[0], dt::f32, strides[0]);
    product.weights = memory::desc(dims[1], dt::f32, strides[1]);
    product.dst = memory::desc(out, dt::f32, outStrides);
    return product;
}

/// A matrix product reading transposed operands or writing a transposed output as strided views:
/// one oneDNN call over every batch.
Result<std::unique_ptr<Kernel>> makeViewedMatmul(const KernelSpec& spec, CpuKernelContext& ctx) {
    auto product = viewedProduct(spec);
    if (!product)
        return product.error();
    MatmulBuild build;
    build.mp.m = product.value().m;
    build.mp.n = product.value().n;
    build.mp.k = product.value().k;
    build.calls.src = product.value().src;
    build.calls.weights = product.value().weights;
    build.calls.dst = product.value().dst;
    build.pd.emplace(dnnl::matmul::desc(build.calls.src, build.calls.weights, build.calls.dst),
                     scratchpadAttr(), ctx.engine);
    auto kernel = std::make_unique<MatmulKernel>(ctx, std::move(build), spec, false);
    kernel->noteViews();
    return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace

Result<std::unique_ptr<Kernel>> makeMatmul(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (matmulViewOf(*spec.node, 0) || matmulViewOf(*spec.node, 1) || matmulViewOf(*spec.node, 2))
        return makeViewedMatmul(spec, ctx);
    if (!allFloat32(spec) && postOpsOf(*spec.node).empty())
        return makePlainMatmul(spec);
    std::optional<memory::desc> packed;
    if (const std::string layout = packedLayoutOf(*spec.node); !layout.empty()) {
        const auto layouts = readPackedLayout(layout);
        if (!layouts)
            return specError(spec, "its weights' packed layout '" + layout +
                                       "' is not one this process made");
        packed = layouts->second;
    }
    auto build = buildMatmul(spec, ctx, packed ? &*packed : nullptr);
    if (!build)
        return build.error();
    if (packed && (!build.value().calls.sharedWeights ||
                   build.value().calls.weights.get_size() != packed->get_size()))
        return specError(spec, "its weights are packed, but it reads them as more than one matrix");
    return std::unique_ptr<Kernel>(
        std::make_unique<MatmulKernel>(ctx, build.take(), spec, packed.has_value()));
}

std::string packedLayout(const KernelSpec& spec, std::size_t input, CpuKernelContext& ctx) {
    if (input != 1 || spec.node->op->kernel.family != KernelFamily::Matmul || !allFloat32(spec))
        return {};
    try {
        auto plain = buildMatmul(spec, ctx, nullptr);
        if (!plain || !plain.value().calls.sharedWeights)
            return {};
        const MatmulCalls& calls = plain.value().calls;
        const memory::desc any(calls.weights.dims(), dt::f32, memory::format_tag::any);
        auto build = buildMatmul(spec, ctx, &any);
        if (!build)
            return {};
        const memory::desc preferred = build.value().pd->weights_desc();
        if (preferred == calls.weights || preferred.get_size() != calls.weights.get_size())
            return {};
        return namePackedLayout(calls.weights, preferred);
    } catch (const dnnl::error&) {
        return {};
    }
}

bool viewsKeepSpeed(const KernelSpec& spec, CpuKernelContext& ctx) {
    try {
        const auto product = viewedProduct(spec);
        if (!product)
            return false;
        const auto& v = product.value();
        auto dense = [](const memory::desc& desc) {
            return plainDesc(Dims(desc.data.dims, desc.data.dims + desc.data.ndims));
        };
        const dnnl::matmul::primitive_desc strided(dnnl::matmul::desc(v.src, v.weights, v.dst),
                                                   scratchpadAttr(), ctx.engine);
        const dnnl::matmul::primitive_desc plain(
            dnnl::matmul::desc(dense(v.src), dense(v.weights), dense(v.dst)), scratchpadAttr(),
            ctx.engine);
        return std::string_view(strided.impl_info_str()) == plain.impl_info_str();
    } catch (const dnnl::error&) {
        return false;
    }
}

std::string packConstant(std::byte* dst, const void* src, std::int64_t bytes,
                         const std::string& layout, CpuKernelContext& ctx) {
    const auto layouts = readPackedLayout(layout);
    if (!layouts)
        return "its packed layout '" + layout + "' is not one this process made";
    if (static_cast<std::int64_t>(layouts->first.get_size()) != bytes ||
        layouts->second.get_size() != layouts->first.get_size())
        return "its packed layout does not hold its " + std::to_string(bytes) + " bytes";
    try {
        memory from(layouts->first, ctx.engine, const_cast<void*>(src));
        memory to(layouts->second, ctx.engine, dst);
        dnnl::reorder(from, to).execute(ctx.stream, from, to);
        ctx.stream.wait();
    } catch (const dnnl::error& e) {
        return std::string("packing it failed: ") + e.what();
    }
    return {};
}

namespace {

/// Adaptive average pooling where windows differ in size (input not a multiple of output).
Result<std::unique_ptr<Kernel>> adaptiveAveragePool(const KernelSpec& spec) {
    const Dims in = spec.inputs[0].shape, out = spec.outputs[0].shape;
    return makeKernel("plain:adaptive_avg_pool", [=](const std::byte* const* inputs,
                                                     std::byte* const* outputs) {
        const auto* x = reinterpret_cast<const float*>(inputs[0]);
        auto* y = reinterpret_cast<float*>(outputs[0]);
        const std::int64_t planes = in[0] * in[1], h = in[2], w = in[3], oh = out[2], ow = out[3];
        for (std::int64_t p = 0; p < planes; ++p) {
            for (std::int64_t i = 0; i < oh; ++i) {
                const std::int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh;
                for (std::int64_t j = 0; j < ow; ++j) {
                    const std::int64_t w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
                    double sum = 0;
                    for (std::int64_t r = h0; r < h1; ++r)
                        for (std::int64_t c = w0; c < w1; ++c)
                            sum += x[(p * h + r) * w + c];
                    y[(p * oh + i) * ow + j] =
                        static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
                }
            }
        }
    });
}

} // namespace

Result<std::unique_ptr<Kernel>> makePooling(const KernelSpec& given, CpuKernelContext& ctx) {
    if (!allFloat32(given))
        return needFloat32(given);
    const bool channelsLast = isChannelsLast(*given.node);
    auto viewed = geometrySpec(given);
    if (!viewed)
        return viewed.error();
    const KernelSpec spec = viewed.take();
    Pooling pooling;
    if (auto error = readPooling(spec, &pooling))
        return specError(spec, *error);
    if (pooling.adaptive && channelsLast)
        return specError(spec, "adaptive pooling is planned in NCHW only");
    if (pooling.adaptive)
        return adaptiveAveragePool(spec);
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    const Window& window = pooling.window;
    const algorithm algo = pooling.isMax            ? algorithm::pooling_max
                           : pooling.includePadding ? algorithm::pooling_avg_include_padding
                                                    : algorithm::pooling_avg_exclude_padding;
    const memory::desc src = activationDesc(in, channelsLast),
                       dst = activationDesc(out, channelsLast);
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algo, src, dst,
                                        window.strides, window.kernel, minusOne(window.dilation),
                                        window.padL, window.padR);
    dnnl::pooling_v2_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    auto kernel = dnnlKernel<dnnl::pooling_v2_forward>("pooling", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, src);
    kernel->bind(DNNL_ARG_DST, -1, dst);
    return std::unique_ptr<Kernel>(std::move(kernel));
}

Result<std::unique_ptr<Kernel>> makeBatchNorm(const KernelSpec& given, CpuKernelContext& ctx) {
    if (!allFloat32(given))
        return needFloat32(given);
    const bool channelsLast = isChannelsLast(*given.node);
    auto viewed = geometrySpec(given);
    if (!viewed)
        return viewed.error();
    const KernelSpec spec = viewed.take();
    Normalization norm;
    if (auto error = readBatchNorm(spec, &norm))
        return specError(spec, *error);
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    const int axis = norm.axis;
    const float epsilon = norm.epsilon;
    const bool center = norm.center, scale = norm.scale;
    // Outputs 2 and 3 of Relay's batch_norm are the moving mean and variance, passed through.
    const std::int64_t channelBytes = spec.inputs[3].bytes();
    const std::size_t extraOutputs = spec.outputs.size() - 1;
    // Post-op fusion (runtime/Optimize.h) gives a batch normalisation the Relu after it.
    const std::string postOps = postOpsOf(*spec.node);
    if (!postOps.empty() && postOps != "relu:0")
        return specError(spec,
                         "a batch normalisation takes only a Relu after it, not '" + postOps + "'");
    const bool relu = !postOps.empty();
    if (axis == 1 && rank >= 2 && rank <= 5) {
        auto flags = dnnl::normalization_flags::use_global_stats;
        if (relu)
            flags |= dnnl::normalization_flags::fuse_norm_relu;
        if (scale)
            flags |= dnnl::normalization_flags::use_scale;
        if (center)
            flags |= dnnl::normalization_flags::use_shift;
        const memory::desc data = activationDesc(in, channelsLast && rank == 4);
        dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     epsilon, flags);
        dnnl::batch_normalization_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
        auto kernel = std::make_shared<std::unique_ptr<DnnlKernel>>(
            dnnlKernel<dnnl::batch_normalization_forward>("batch_normalization", ctx, pd));
        DnnlKernel& k = **kernel;
        const memory::desc channel = plainDesc({in[1]});
        k.bind(DNNL_ARG_SRC, 0, data);
        if (scale)
            k.bind(DNNL_ARG_SCALE, 1, channel);
        if (center)
            k.bind(DNNL_ARG_SHIFT, 2, channel);
        k.bind(DNNL_ARG_MEAN, 3, channel);
        k.bind(DNNL_ARG_VARIANCE, 4, channel);
        k.bind(DNNL_ARG_DST, -1, data);
        const std::string name = k.implementation() + (relu ? "+relu" : "");
        return makeKernel(name, [kernel, extraOutputs, channelBytes](const std::byte* const* inputs,
                                                                     std::byte* const* outputs) {
            (*kernel)->run(inputs, outputs);
            for (std::size_t k = 0; k < extraOutputs; ++k)
                std::memcpy(outputs[k + 1], inputs[k + 3], static_cast<std::size_t>(channelBytes));
        });
    }
    if (channelsLast)
        return specError(spec, "channels-last batch normalisation needs channels on axis 1");
    const std::int64_t outer = norm.outer, channels = norm.channels, inner = norm.inner;
    return makeKernel(
        relu ? "plain:batch_norm+relu" : "plain:batch_norm",
        [=](const std::byte* const* inputs, std::byte* const* outputs) {
            const auto* x = reinterpret_cast<const float*>(inputs[0]);
            const auto* gamma = reinterpret_cast<const float*>(inputs[1]);
            const auto* betaIn = reinterpret_cast<const float*>(inputs[2]);
            const auto* mean = reinterpret_cast<const float*>(inputs[3]);
            const auto* var = reinterpret_cast<const float*>(inputs[4]);
            auto* y = reinterpret_cast<float*>(outputs[0]);
            for (std::int64_t o = 0; o < outer; ++o) {
                for (std::int64_t c = 0; c < channels; ++c) {
                    const float g = (scale ? gamma[c] : 1.0f) / std::sqrt(var[c] + epsilon);
                    const float b = (center ? betaIn[c] : 0.0f) - mean[c] * g;
                    const std::int64_t base = (o * channels + c) * inner;
                    for (std::int64_t i = 0; i < inner; ++i)
                        y[base + i] = x[base + i] * g + b;
                    if (relu) {
                        for (std::int64_t i = 0; i < inner; ++i)
                            y[base + i] = std::max(y[base + i], 0.0f);
                    }
                }
            }
            for (std::size_t k = 0; k < extraOutputs; ++k)
                std::memcpy(outputs[k + 1], inputs[k + 3], static_cast<std::size_t>(channelBytes));
        });
}

Result<std::unique_ptr<Kernel>> makeLayerNorm(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (!allFloat32(spec))
        return needFloat32(spec);
    Normalization norm;
    if (auto error = readLayerNorm(spec, &norm))
        return specError(spec, *error);
    const float epsilon = norm.epsilon;
    const bool scale = norm.scale, center = norm.center;
    const std::int64_t outer = norm.outer, channels = norm.channels, inner = norm.inner;
    if (inner == 1 && spec.outputs.size() == 1 && outer > 0 && channels > 0) {
        auto flags = dnnl::normalization_flags::none;
        if (scale)
            flags |= dnnl::normalization_flags::use_scale;
        if (center)
            flags |= dnnl::normalization_flags::use_shift;
        const memory::desc data = plainDesc({outer, channels});
        dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     epsilon, flags);
        dnnl::layer_normalization_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
        auto kernel = dnnlKernel<dnnl::layer_normalization_forward>("layer_normalization", ctx, pd);
        kernel->bind(DNNL_ARG_SRC, 0, data);
        if (scale)
            kernel->bind(DNNL_ARG_SCALE, 1, plainDesc({channels}));
        if (center)
            kernel->bind(DNNL_ARG_SHIFT, 2, plainDesc({channels}));
        kernel->bind(DNNL_ARG_DST, -1, data);
        return std::unique_ptr<Kernel>(std::move(kernel));
    }
    // Normalising over an inner axis, or with ONNX's Mean and InvStdDev outputs: the shared
    // LayerNorm row functor, one row per normalised vector.
    const std::size_t outputs = spec.outputs.size();
    return makeKernel("plain:layer_norm", [=](const std::byte* const* in, std::byte* const* out) {
        functors::LayerNorm op;
        op.x = reinterpret_cast<const float*>(in[0]);
        op.y = reinterpret_cast<float*>(out[0]);
        op.gamma = scale ? reinterpret_cast<const float*>(in[1]) : nullptr;
        op.beta = center ? reinterpret_cast<const float*>(in[2]) : nullptr;
        op.meanOut = outputs > 1 ? reinterpret_cast<float*>(out[1]) : nullptr;
        op.invStdOut = outputs > 2 ? reinterpret_cast<float*>(out[2]) : nullptr;
        op.channels = channels;
        op.inner = inner;
        op.epsilon = epsilon;
        functors::runRowsOnHost(op, outer * inner);
    });
}

Result<std::unique_ptr<Kernel>> makeSoftmax(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (!allFloat32(spec))
        return needFloat32(spec);
    Softmax softmax;
    if (auto error = readSoftmax(spec, &softmax))
        return specError(spec, *error);
    const memory::desc view = plainDesc({softmax.outer, softmax.channels, softmax.inner});
    const bool log = softmax.log;
    dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                        log ? algorithm::softmax_log : algorithm::softmax_accurate,
                                        view, view, 1);
    dnnl::softmax_v2_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    auto kernel = dnnlKernel<dnnl::softmax_v2_forward>("softmax", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, view);
    kernel->bind(DNNL_ARG_DST, -1, view);
    return std::unique_ptr<Kernel>(std::move(kernel));
}

namespace {

/// Output 0 = algo(input 0) over output 0's shape, or null where oneDNN has only its reference
/// implementation.
std::unique_ptr<Kernel> eltwiseKernel(const KernelSpec& spec, CpuKernelContext& ctx, algorithm algo,
                                      float alpha, float beta) {
    const memory::desc data = plainDesc(spec.outputs[0].shape);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algo, data, alpha, beta);
    dnnl::eltwise_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr;
    auto kernel = dnnlKernel<dnnl::eltwise_forward>("eltwise", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, data);
    kernel->bind(DNNL_ARG_DST, -1, data);
    return kernel;
}

} // namespace

std::unique_ptr<Kernel> makeDnnlEltwise(const KernelSpec& spec, CpuKernelContext& ctx, UnaryFn fn,
                                        float alpha, float beta) {
    struct Mapping {
        algorithm algo;
        float alpha, beta;
    };
    std::optional<Mapping> m;
    switch (fn) {
    case UnaryFn::Relu:
        m = Mapping{algorithm::eltwise_relu, 0, 0};
        break;
    case UnaryFn::LeakyRelu:
        m = Mapping{algorithm::eltwise_relu, alpha, 0};
        break;
    case UnaryFn::Tanh:
        m = Mapping{algorithm::eltwise_tanh, 0, 0};
        break;
    case UnaryFn::Abs:
        m = Mapping{algorithm::eltwise_abs, 0, 0};
        break;
    case UnaryFn::Sqrt:
        m = Mapping{algorithm::eltwise_sqrt, 0, 0};
        break;
    case UnaryFn::Sigmoid:
        m = Mapping{algorithm::eltwise_logistic, 0, 0};
        break;
    case UnaryFn::Exp:
        m = Mapping{algorithm::eltwise_exp, 0, 0};
        break;
    case UnaryFn::Log:
        m = Mapping{algorithm::eltwise_log, 0, 0};
        break;
    case UnaryFn::Clip:
        m = Mapping{algorithm::eltwise_clip_v2, std::max(alpha, -FLT_MAX), std::min(beta, FLT_MAX)};
        break;
    case UnaryFn::Round:
        m = Mapping{algorithm::eltwise_round, 0, 0};
        break;
    case UnaryFn::Negative:
        m = Mapping{algorithm::eltwise_linear, -1, 0};
        break;
    case UnaryFn::Rsqrt:
        m = Mapping{algorithm::eltwise_pow, 1, -0.5f};
        break;
    case UnaryFn::Reciprocal:
        m = Mapping{algorithm::eltwise_pow, 1, -1};
        break;
    case UnaryFn::HardSwish:
        m = Mapping{algorithm::eltwise_hardswish, 0, 0};
        break;
    case UnaryFn::Gelu:
        m = Mapping{algorithm::eltwise_gelu_erf, 0, 0};
        break;
    default:
        break;
    }
    if (!m)
        return nullptr;
    return eltwiseKernel(spec, ctx, m->algo, m->alpha, m->beta);
}

std::unique_ptr<Kernel> makeDnnlPower(const KernelSpec& spec, CpuKernelContext& ctx,
                                      float exponent) {
    if (spec.inputs[0].shape != spec.outputs[0].shape || product(spec.outputs[0].shape) == 0)
        return nullptr;
    return eltwiseKernel(spec, ctx, algorithm::eltwise_pow, 1.0f, exponent);
}

std::unique_ptr<Kernel> makeDnnlTranspose(const KernelSpec& spec, CpuKernelContext& ctx,
                                          const Dims& perm) {
    const DType type = spec.inputs[0].dtype;
    const Dims& in = spec.inputs[0].shape;
    if ((type != DType::Float32 && type != DType::Int32) || in.empty() || in.size() > 12 ||
        perm.size() != in.size() || product(in) == 0)
        return nullptr;
    // The destination is the input's dims with strides that store them in the output's order.
    const Dims outStrides = contiguousStrides(spec.outputs[0].shape);
    Dims dstStrides(in.size());
    for (std::size_t k = 0; k < perm.size(); ++k)
        dstStrides[static_cast<std::size_t>(perm[k])] = outStrides[k];
    const dt element = type == DType::Float32 ? dt::f32 : dt::s32;
    const memory::desc src(in, element, contiguousStrides(in)), dst(in, element, dstStrides);
    dnnl::reorder::primitive_desc pd(ctx.engine, src, ctx.engine, dst, scratchpadAttr());
    auto kernel = dnnlKernel<dnnl::reorder>("reorder", ctx, pd);
    kernel->bind(DNNL_ARG_FROM, 0, src);
    kernel->bind(DNNL_ARG_TO, -1, dst);
    return kernel;
}

std::unique_ptr<Kernel> makeDnnlBinary(const KernelSpec& spec, CpuKernelContext& ctx,
                                       BinaryFn function) {
    // oneDNN's algorithm, and whether the operands may be swapped (it broadcasts only its second).
    std::pair<algorithm, bool> how;
    switch (function) {
    case BinaryFn::Add:
        how = {algorithm::binary_add, true};
        break;
    case BinaryFn::Sub:
        how = {algorithm::binary_sub, false};
        break;
    case BinaryFn::Mul:
        how = {algorithm::binary_mul, true};
        break;
    case BinaryFn::Div:
        how = {algorithm::binary_div, false};
        break;
    case BinaryFn::Max:
        how = {algorithm::binary_max, true};
        break;
    case BinaryFn::Min:
        how = {algorithm::binary_min, true};
        break;
    default:
        return nullptr;
    }
    const Dims& out = spec.outputs[0].shape;
    Dims a = geometry::binaryOperandShape(spec, 0), b = geometry::binaryOperandShape(spec, 1);
    int first = 0, second = 1;
    if (a != out) {
        if (b != out || !how.second)
            return nullptr; // oneDNN broadcasts only its second operand
        std::swap(a, b);
        std::swap(first, second);
    }
    while (b.size() < out.size())
        b.insert(b.begin(), 1);
    if (out.empty() || product(out) == 0)
        return nullptr;
    dnnl::binary::desc desc(how.first, plainDesc(a), plainDesc(b), plainDesc(out));
    dnnl::binary::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr; // a broadcast oneDNN has no JIT path for: the plain strided loop
    auto kernel = dnnlKernel<dnnl::binary>("binary", ctx, pd);
    kernel->bind(DNNL_ARG_SRC_0, first, plainDesc(a));
    kernel->bind(DNNL_ARG_SRC_1, second, plainDesc(b));
    kernel->bind(DNNL_ARG_DST, -1, plainDesc(out));
    return kernel;
}

std::unique_ptr<Kernel> makeDnnlReduction(const KernelSpec& spec, CpuKernelContext& ctx,
                                          ReduceFn function, const Dims& keptShape) {
    algorithm algo = algorithm::reduction_sum;
    switch (function) {
    case ReduceFn::Sum:
        algo = algorithm::reduction_sum;
        break;
    case ReduceFn::Mean:
        algo = algorithm::reduction_mean;
        break;
    case ReduceFn::Max:
        algo = algorithm::reduction_max;
        break;
    case ReduceFn::Min:
        algo = algorithm::reduction_min;
        break;
    case ReduceFn::Prod:
        algo = algorithm::reduction_mul;
        break;
    default:
        return nullptr; // the norms, log-sums and arg-reductions: the plain kernel
    }
    const Dims& in = spec.inputs[0].shape;
    if (in == keptShape)
        return nullptr; // nothing reduced: oneDNN refuses, the plain kernel copies
    dnnl::reduction::desc desc(algo, plainDesc(in), plainDesc(keptShape), 0, 0);
    dnnl::reduction::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr;
    auto kernel = dnnlKernel<dnnl::reduction>("reduction", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, plainDesc(in));
    kernel->bind(DNNL_ARG_DST, -1, plainDesc(keptShape));
    return kernel;
}

} // namespace placer::cpu
