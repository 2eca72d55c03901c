// Convolutions on oneDNN: blocked layouts, post-ops inside the primitive where oneDNN keeps its
// fastest implementation with them (else after it, in place), and a batch normalisation folded
// into the weights.
#include "backends/cpu/DnnlSupport.h"

#include "kernels/IndexingPlan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <variant>

namespace placer::cpu {

using namespace geometry;

namespace {

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
    void foldBatchNormFrom(int input, const DnnlPostOp& op, std::int64_t channels,
                           std::int64_t weightCount, bool ownBias, bool constant) {
        Folded folded;
        folded.input = input;
        folded.epsilon = op.epsilon;
        folded.scale = op.scaled;
        folded.center = op.shifted;
        folded.ownBias = ownBias;
        folded.constant = constant;
        folded.weights.resize(static_cast<std::size_t>(weightCount));
        folded.bias.resize(static_cast<std::size_t>(channels));
        m_folded = std::move(folded);
        m_constantWeights = constant;
        m_implementation += "+batch_norm folded";
    }

    /// A post-op oneDNN would not fuse, run after the convolution in place on its output.
    void addAfter(const DnnlPostOp& op, int input) {
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
    auto parsed = dnnlPostOps(fused);
    if (!parsed)
        return parsed.error();
    const std::vector<DnnlPostOp> postOps = parsed.take();
    const std::size_t extra = extraInputs(postOps);
    if (std::any_of(postOps.begin(), postOps.end(), [](const DnnlPostOp& op) { return op.bias(); }))
        return specError(fused, "a convolution takes its bias as its third input");
    if (fused.inputs.size() < extra + 2)
        return specError(fused, "fewer inputs than the post-ops read");
    const KernelSpec given = withoutExtraInputs(fused, extra);
    // A batch normalisation right after the convolution is folded into it; the rest are
    // oneDNN's post-ops.
    std::optional<DnnlPostOp> batchNorm;
    std::vector<DnnlPostOp> chain = postOps;
    if (!chain.empty() && chain.front().batchNorm()) {
        batchNorm = chain.front();
        chain.erase(chain.begin());
    }
    if (std::any_of(chain.begin(), chain.end(),
                    [](const DnnlPostOp& op) { return op.batchNorm(); }))
        return specError(fused, "a batch normalisation is folded only right after a convolution");
    const bool channelsLast = given.node->hints.channelsLast;
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
        std::count_if(chain.begin(), chain.end(), [](const DnnlPostOp& op) { return op.add(); });
    for (const Fusion tried : {Fusion::Binary, Fusion::Sum}) {
        if (chain.empty() || (tried == Fusion::Sum && adds != 1))
            continue;
        try {
            dnnl::post_ops ops;
            for (const DnnlPostOp& op : chain) {
                if (op.add() && tried == Fusion::Sum)
                    ops.append_sum(1.0f);
                else if (op.add())
                    ops.append_binary(algorithm::binary_add, userDst);
                else
                    ops.append_eltwise(1.0f, op.eltwise.algo, op.eltwise.alpha, op.eltwise.beta);
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
        const DnnlPostOp& op = chain[k];
        if (inside) {
            if (op.add() && fusion == Fusion::Binary)
                kernel->bindPostOpInput(static_cast<int>(k), operand++, userDst);
            else if (op.add())
                kernel->setSumInput(operand++);
            continue;
        }
        kernel->addAfter(op, op.add() ? operand++ : -1);
    }
    if (inside)
        kernel->noteFused(chain.size());
    return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace placer::cpu

namespace placer::cpu {

std::unique_ptr<Kernel> makeDnnlDeconvolution(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (!allFloat32(spec) || spec.inputs.size() < 2 || spec.outputs.size() != 1 ||
        spec.inputs[0].rank() < 3 || spec.inputs[0].rank() > 5 ||
        spec.node->attrs.getInt("group", 1).value_or(1) != 1 || !spec.node->hints.postOps.empty())
        return nullptr;
    auto plan = planIndexing(spec);
    if (!plan || plan.value().size() != 1)
        return nullptr;
    const auto* op = std::get_if<functors::ConvTranspose>(&plan.value()[0].op);
    if (!op)
        return nullptr;
    const Dims& in = spec.inputs[0].shape;
    const Dims& w = spec.inputs[1].shape;
    const Dims& out = spec.outputs[0].shape;
    const std::size_t spatial = in.size() - 2;
    Dims strides, dilations, padL, padR;
    for (std::size_t d = 0; d < spatial; ++d) {
        strides.push_back(op->stride[d]);
        dilations.push_back(op->dilation[d] - 1);
        padL.push_back(op->padBegin[d]);
        // oneDNN: out = (in - 1) * stride - padL - padR + (kernel - 1) * dilation + 1.
        padR.push_back((in[d + 2] - 1) * op->stride[d] + (w[d + 2] - 1) * op->dilation[d] + 1 -
                       out[d + 2] - op->padBegin[d]);
        if (padL.back() < 0 || padR.back() < 0)
            return nullptr; // output padding past the kernel: the functor handles it
    }
    // ONNX's weights are [in channels, out channels, kernel...]: oneDNN's "io..." layout.
    Dims weightDims{w[1], w[0]};
    weightDims.insert(weightDims.end(), w.begin() + 2, w.end());
    Dims weightStrides = contiguousStrides(w); // ONNX's order: in, out, kernel...
    std::swap(weightStrides[0], weightStrides[1]);
    const memory::desc userWeights(weightDims, dt::f32, weightStrides);
    const memory::desc src = plainDesc(in), dst = plainDesc(out);
    const bool hasBias = spec.inputs.size() > 2;
    const memory::desc bias = hasBias ? plainDesc({out[1]}) : memory::desc();
    try {
        // The model's own layouts: oneDNN's deconvolution runs them with its jit kernels.
        dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               algorithm::deconvolution_direct, src, userWeights,
                                               bias, dst, strides, dilations, padL, padR);
        dnnl::deconvolution_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
        if (isReference(pd))
            return nullptr;
        auto kernel = dnnlKernel<dnnl::deconvolution_forward>("deconvolution", ctx, pd);
        kernel->bind(DNNL_ARG_SRC, 0, src);
        kernel->bind(DNNL_ARG_WEIGHTS, 1, userWeights);
        if (hasBias)
            kernel->bind(DNNL_ARG_BIAS, 2, bias);
        kernel->bind(DNNL_ARG_DST, -1, dst);
        return kernel;
    } catch (const dnnl::error&) {
        return nullptr;
    }
}

} // namespace placer::cpu
