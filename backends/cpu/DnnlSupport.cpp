// The oneDNN kernels' shared helpers (backends/cpu/DnnlSupport.h).
#include "backends/cpu/DnnlSupport.h"

#include <algorithm>
#include <cfloat>

namespace placer::cpu {

memory::desc plainDesc(Dims dims) {
    if (dims.empty())
        dims = {1};
    return memory::desc(dims, dt::f32, contiguousStrides(dims));
}

memory::desc activationDesc(const Dims& nchw, bool channelsLast) {
    if (!channelsLast)
        return plainDesc(nchw);
    return memory::desc(nchw, dt::f32, memory::format_tag::nhwc);
}

Dims nchwOf(const Dims& nhwc) {
    return {nhwc[0], nhwc[3], nhwc[1], nhwc[2]};
}

KernelSpec nchwView(const KernelSpec& spec) {
    KernelSpec view = spec;
    view.inputs[0].shape = nchwOf(spec.inputs[0].shape);
    view.outputs[0].shape = nchwOf(spec.outputs[0].shape);
    return view;
}

std::optional<std::string> channelsLastProblem(const KernelSpec& spec) {
    if (spec.inputs.empty() || spec.outputs.size() != 1 || spec.inputs[0].rank() != 4 ||
        spec.outputs[0].rank() != 4 || spec.inputs[0].dtype != DType::Float32 ||
        spec.outputs[0].dtype != DType::Float32)
        return "channels-last (NHWC) needs 4-D float32 data";
    return std::nullopt;
}

Result<KernelSpec> geometrySpec(const KernelSpec& given) {
    if (!given.node->hints.channelsLast)
        return given;
    if (auto problem = channelsLastProblem(given))
        return specError(given, *problem);
    return nchwView(given);
}

std::optional<Dims> matmulView(const KernelSpec& spec, std::size_t which) {
    const Dims& view = spec.node->hints.views.at(which);
    if (view.empty())
        return std::nullopt;
    return view;
}

Result<KernelSpec> float32GeometrySpec(const KernelSpec& given) {
    if (!allFloat32(given))
        return specError(given, "only float32 is supported on the CPU for this operator");
    return geometrySpec(given);
}

dnnl::primitive_attr scratchpadAttr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

DnnlKernel::DnnlKernel(std::string implementation, CpuKernelContext& ctx, dnnl::primitive primitive,
                       const memory::desc& scratchpad)
    : m_implementation(std::move(implementation)), m_ctx(ctx), m_primitive(std::move(primitive)) {
    if (scratchpad.get_size() > 0)
        m_args[DNNL_ARG_SCRATCHPAD] = memory(scratchpad, ctx.engine);
}

void DnnlKernel::bind(int arg, int index, const memory::desc& desc) {
    m_bindings.push_back({arg, index});
    m_args[arg] = memory(desc, m_ctx.engine, nullptr);
}

void DnnlKernel::run(const std::byte* const* inputs, std::byte* const* outputs) {
    for (const auto& [arg, index] : m_bindings) {
        void* data = index >= 0 ? const_cast<std::byte*>(inputs[index]) : outputs[-index - 1];
        m_args[arg].set_data_handle(data);
    }
    m_primitive.execute(m_ctx.stream, m_args);
    m_ctx.stream.wait();
}

std::string implName(const char* primitive, const dnnl::primitive_desc_base& pd) {
    return std::string("onednn:") + primitive + ":" + pd.impl_info_str();
}

bool isReference(const dnnl::primitive_desc_base& pd) {
    return std::string_view(pd.impl_info_str()).starts_with("ref");
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

std::optional<Eltwise> dnnlEltwise(UnaryFn fn, float alpha, float beta) {
    switch (fn) {
    case UnaryFn::Relu:
        return Eltwise{algorithm::eltwise_relu, 0, 0};
    case UnaryFn::LeakyRelu:
        return Eltwise{algorithm::eltwise_relu, alpha, 0};
    case UnaryFn::Elu:
        return Eltwise{algorithm::eltwise_elu, alpha, 0};
    case UnaryFn::Tanh:
        return Eltwise{algorithm::eltwise_tanh, 0, 0};
    case UnaryFn::Abs:
        return Eltwise{algorithm::eltwise_abs, 0, 0};
    case UnaryFn::Sqrt:
        return Eltwise{algorithm::eltwise_sqrt, 0, 0};
    case UnaryFn::Sigmoid:
        return Eltwise{algorithm::eltwise_logistic, 0, 0};
    case UnaryFn::Exp:
        return Eltwise{algorithm::eltwise_exp, 0, 0};
    // No Log: oneDNN 2.6's eltwise_log is off by up to 3.4e-6 near 1 (a relative error of 67 %
    // for log(1 + 1e-6)); the element functor's logf is within an ulp, as CUDA's is.
    case UnaryFn::Clip:
        return Eltwise{algorithm::eltwise_clip_v2, std::max(alpha, -FLT_MAX),
                       std::min(beta, FLT_MAX)};
    case UnaryFn::Round:
        return Eltwise{algorithm::eltwise_round, 0, 0};
    case UnaryFn::Negative:
        return Eltwise{algorithm::eltwise_linear, -1, 0};
    case UnaryFn::Rsqrt:
        return Eltwise{algorithm::eltwise_pow, 1, -0.5f};
    case UnaryFn::Reciprocal:
        return Eltwise{algorithm::eltwise_pow, 1, -1};
    case UnaryFn::HardSwish:
        return Eltwise{algorithm::eltwise_hardswish, 0, 0};
    case UnaryFn::Gelu:
        return Eltwise{algorithm::eltwise_gelu_erf, 0, 0};
    default:
        return std::nullopt;
    }
}

Result<std::vector<DnnlPostOp>> dnnlPostOps(const KernelSpec& spec) {
    std::vector<DnnlPostOp> ops;
    for (const PostOp& given : spec.node->hints.postOps) {
        DnnlPostOp op;
        op.kind = given.kind;
        switch (given.kind) {
        case PostOp::Kind::Unary: {
            const auto eltwise = dnnlEltwise(given.fn, static_cast<float>(given.alpha),
                                             static_cast<float>(given.beta));
            if (!eltwise)
                return specError(spec, "oneDNN has no post-op for its unary function");
            op.eltwise = *eltwise;
            break;
        }
        case PostOp::Kind::Swish:
            op.eltwise = Eltwise{algorithm::eltwise_swish, 1, 0};
            break;
        case PostOp::Kind::BatchNorm:
            op.epsilon = static_cast<float>(given.alpha);
            op.scaled = given.scaled;
            op.shifted = given.shifted;
            break;
        case PostOp::Kind::Add:
        case PostOp::Kind::Bias:
            break;
        }
        ops.push_back(op);
    }
    return ops;
}

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

std::size_t extraInputs(const std::vector<DnnlPostOp>& ops) {
    std::size_t count = 0;
    for (const DnnlPostOp& op : ops)
        count += op.batchNorm() ? 4 : op.binary() ? 1 : 0;
    return count;
}

std::string PostOpsAfter::append(CpuKernelContext& ctx, const DnnlPostOp& op,
                                 const memory::desc& dst, int input, const memory::desc& operand) {
    After after;
    std::string name;
    if (op.binary()) {
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
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, op.eltwise.algo, dst,
                                        op.eltwise.alpha, op.eltwise.beta),
            scratchpadAttr(), ctx.engine);
        after.primitive = dnnl::eltwise_forward(pd);
        if (pd.scratchpad_desc().get_size() > 0)
            after.scratchpad = memory(pd.scratchpad_desc(), ctx.engine);
        name = implName("eltwise", pd);
    }
    m_after.push_back(std::move(after));
    return name;
}

void PostOpsAfter::run(dnnl::stream& s, const memory& dst, const std::byte* const* inputs) {
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

} // namespace placer::cpu
