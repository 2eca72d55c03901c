// Matrix products on oneDNN (MatMul, Gemm, Relay's dense): one call over every batch where the
// batches allow, post-ops and the bias inside the primitive where oneDNN keeps its
// implementation, strided views of transposed operands, and weights packed at load in the
// layout the kernel prefers.
#include "backends/cpu/DnnlSupport.h"
#include "backends/cpu/VectorMath.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

namespace placer::cpu {

using namespace geometry;

bool anyEmptyOperand(const KernelSpec& spec);

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
    std::vector<std::pair<DnnlPostOp, int>> inside, after;
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
    auto parsed = dnnlPostOps(fused);
    if (!parsed)
        return parsed.error();
    const std::vector<DnnlPostOp> postOps = parsed.take();
    const std::size_t extra = extraInputs(postOps);
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
    std::vector<std::pair<DnnlPostOp, int>> ops;
    int operand = static_cast<int>(spec.inputs.size());
    for (const DnnlPostOp& op : postOps) {
        const bool binary = op.add() || op.bias();
        if (op.bias() && (!ops.empty() || mp.biasInput >= 0 || out.empty() || out.back() != mp.n ||
                          !isRow(fused.inputs[static_cast<std::size_t>(operand)])))
            return specError(fused, "a fused bias must come first, be a row of the output's "
                                    "last extent, and not follow Gemm's own");
        ops.emplace_back(op, binary ? operand++ : -1);
    }
    // The bias goes inside the product where oneDNN adds it as it accumulates: unscaled.
    if (!ops.empty() && ops.front().first.bias() && mp.alpha == 1) {
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
    const bool binaries = std::any_of(
        ops.begin(), ops.end(), [](const auto& op) { return op.first.add() || op.first.bias(); });
    bool inside = false;
    if (!ops.empty() && !b.loopBias && (b.calls.offsets.empty() || !binaries)) {
        try {
            dnnl::post_ops chain;
            for (const auto& [op, input] : ops) {
                if (op.add())
                    chain.append_binary(algorithm::binary_add, b.calls.dst);
                else if (op.bias())
                    chain.append_binary(algorithm::binary_add, rowDesc(callRank, mp.n));
                else
                    chain.append_eltwise(1.0f, op.eltwise.algo, op.eltwise.alpha, op.eltwise.beta);
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
            const memory::desc desc = build.inside[k].first.bias()
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
                op.bias() ? rowDesc(static_cast<int>(out.size()), build.mp.n) : plainDesc(out);
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

/// Whether a matrix product is one row times a matrix per batch (a decoder's step through a
/// dense layer, or its attention over the cache), which the GEMV kernel runs: float32, read in
/// place (no views; weights packed in blocks of columns, packedColumns), a bias that is a row or
/// a scalar.
bool isRowTimesMatrix(const KernelSpec& fused) {
    if (!allFloat32(fused) || fused.node->hints.hasViews() || anyEmptyOperand(fused))
        return false;
    auto parsed = dnnlPostOps(fused);
    if (!parsed)
        return false;
    const std::size_t extra = extraInputs(parsed.value());
    if (fused.inputs.size() < extra + 2)
        return false;
    const KernelSpec spec = withoutExtraInputs(fused, extra);
    MatrixProduct mp;
    if (readMatrixProduct(spec, &mp) || mp.m != 1 || (mp.batches > 1 && mp.biasInput >= 0))
        return false;
    if (mp.biasInput >= 0) {
        const std::int64_t count =
            spec.inputs[static_cast<std::size_t>(mp.biasInput)].elementCount();
        if (count != 1 && count != mp.n)
            return false;
    }
    return true;
}

/// Weights packed so that a GEMV streams them (oneDNN's blocked layouts whose columns come in
/// blocks of `width`, a block's rows one after another, as BA16a64b stores them): block j is a
/// row-major matrix of `width` columns at j * blockStride.
struct PackedColumns {
    std::int64_t width = 0, blockStride = 0;
};

std::optional<PackedColumns> packedColumns(const memory::desc& packed) {
    const dnnl_memory_desc_t& d = packed.data;
    if (d.ndims != 2 || d.format_kind != dnnl_blocked || d.data_type != dnnl_f32 || d.offset0 != 0)
        return std::nullopt;
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    std::int64_t rows = 1, width = 0;
    if (b.inner_nblks == 2 && b.inner_idxs[0] == 0 && b.inner_idxs[1] == 1) {
        rows = b.inner_blks[0];
        width = b.inner_blks[1];
    } else if (b.inner_nblks == 1 && b.inner_idxs[0] == 1) {
        width = b.inner_blks[0];
    } else {
        return std::nullopt;
    }
    // The blocks of rows one after another in a block of columns, which do not overlap.
    if (width <= 0 || b.strides[0] != rows * width || b.strides[1] < d.padded_dims[0] * width)
        return std::nullopt;
    return PackedColumns{width, b.strides[1]};
}

/// Whether a product's rows follow the sizes a program runs at (its output's dimensions but the
/// last are named: a decoder's tokens), so that the same node is a GEMV at one token and a GEMM
/// over the prompt.
bool rowsFollowSizes(const Node& node) {
    if (node.symbolicShapes.empty())
        return false;
    const SymbolicShape& out = node.symbolicShapes.front();
    for (std::size_t d = 0; d + 1 < out.size(); ++d) {
        if (!out[d] || !out[d]->isConstant())
            return true;
    }
    return false;
}

/// One row times a matrix per batch (isRowTimesMatrix): the matrix streamed from memory once,
/// several of its rows at a time (vec::rowTimesMatrix), the columns (one matrix) or the batches
/// split among the context's threads. oneDNN's matrix product reads the weights as one stream,
/// half as fast where memory bounds the step; and a kernel made for every length of a cache
/// costs nothing to make here.
class GemvKernel final : public Kernel {
public:
    GemvKernel(CpuKernelContext& ctx, const KernelSpec& fused, const std::vector<DnnlPostOp>& ops,
               const MatrixProduct& mp, std::optional<PackedColumns> packed)
        : m_ctx(ctx), m_k(mp.k), m_n(mp.n), m_transposed(mp.b.transposed), m_alpha(mp.alpha),
          m_beta(mp.beta), m_biasInput(mp.biasInput), m_packed(packed) {
        if (mp.batches > 1)
            m_batches = batchOffsets(mp.a.batch, mp.b.batch, mp.outBatch);
        const Dims& out = fused.outputs[0].shape;
        if (m_biasInput >= 0)
            m_biasIsRow = fused.inputs[static_cast<std::size_t>(m_biasInput)].elementCount() > 1;
        int operand = static_cast<int>(fused.inputs.size() - extraInputs(ops));
        for (const DnnlPostOp& op : ops) {
            const int input = op.binary() ? operand++ : -1;
            const memory::desc desc =
                op.bias() ? rowDesc(static_cast<int>(out.size()), m_n) : plainDesc(out);
            m_implementation += "+" + m_after.append(ctx, op, plainDesc(out), input, desc);
        }
        if (!m_after.empty())
            m_out = memory(plainDesc(out), ctx.engine, nullptr);
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const auto* x = reinterpret_cast<const float*>(inputs[0]);
        const auto* w = reinterpret_cast<const float*>(inputs[1]);
        auto* y = reinterpret_cast<float*>(outputs[0]);
        // Stored [K, N], or [N, K] when transposed: the row stride is the other extent.
        const std::int64_t ld = m_transposed ? m_k : m_n;
        const int threads = std::max(1, omp_get_max_threads());
        const auto product = [&](const float* row, const float* matrix, float* out,
                                 std::int64_t begin, std::int64_t end) {
            if (m_packed) {
                // Whole blocks of columns (begin and end are on their bounds, or at n).
                const std::int64_t width = m_packed->width;
                vec::rowTimesColumnBlocks(row, m_k, matrix + begin / width * m_packed->blockStride,
                                          m_packed->blockStride, width, end - begin, out + begin);
            } else if (m_transposed)
                vec::rowTimesTransposed(row, m_k, matrix + begin * ld, ld, end - begin,
                                        out + begin);
            else
                vec::rowTimesMatrix(row, m_k, matrix + begin, ld, end - begin, out + begin);
        };
        if (!m_batches.empty()) {
            const auto count = static_cast<std::int64_t>(m_batches.size());
            const std::int64_t matrix = m_k * m_n;
#pragma omp parallel for num_threads(threads) if (threads > 1 && count * matrix >= kParallelWork)
            for (std::int64_t b = 0; b < count; ++b) {
                const auto [ai, bi] = m_batches[static_cast<std::size_t>(b)];
                product(x + ai * m_k, w + bi * matrix, y + b * m_n, 0, m_n);
            }
        } else if (const std::int64_t parts =
                       std::min<std::int64_t>(threads, m_n / kColumnsPerThread);
                   parts > 1) {
            // Whole vectors of sixteen columns a part, or whole blocks of packed columns.
            const std::int64_t unit = m_packed ? m_packed->width : 16;
            const std::int64_t step = (m_n / parts + unit - 1) / unit * unit;
#pragma omp parallel for num_threads(static_cast <int>(parts))
            for (std::int64_t p = 0; p < parts; ++p)
                product(x, w, y, std::min(m_n, p * step),
                        p + 1 == parts ? m_n : std::min(m_n, (p + 1) * step));
        } else {
            product(x, w, y, 0, m_n);
        }
        if (m_alpha != 1 || m_biasInput >= 0) {
            const float* bias =
                m_biasInput >= 0 ? reinterpret_cast<const float*>(inputs[m_biasInput]) : nullptr;
            const std::int64_t count =
                m_n * std::max<std::int64_t>(1, static_cast<std::int64_t>(m_batches.size()));
            for (std::int64_t j = 0; j < count; ++j)
                y[j] = m_alpha * y[j] + (bias ? m_beta * bias[m_biasIsRow ? j : 0] : 0.0f);
        }
        if (!m_after.empty()) {
            m_out.set_data_handle(y);
            m_after.run(m_ctx.stream, m_out, inputs);
            m_ctx.stream.wait();
        }
    }

    std::string implementation() const override {
        return std::string("gemv:") +
               (m_packed       ? "packed column blocks"
                : m_transposed ? "dot rows"
                               : "row streams") +
               m_implementation;
    }

private:
    static constexpr std::int64_t kColumnsPerThread = 256;
    static constexpr std::int64_t kParallelWork = 1 << 16; ///< multiply-adds worth threads
    /// Per output batch, the batch of the row and of the matrix it reads; empty for one.
    std::vector<std::pair<std::int64_t, std::int64_t>> m_batches;
    CpuKernelContext& m_ctx;
    std::int64_t m_k, m_n;
    bool m_transposed;
    float m_alpha, m_beta;
    int m_biasInput;
    bool m_biasIsRow = false;
    std::optional<PackedColumns> m_packed; ///< the weights' blocks, where packed at load
    std::string m_implementation;
    memory m_out;
    PostOpsAfter m_after;
};

Result<std::unique_ptr<Kernel>> makeGemv(const KernelSpec& fused, CpuKernelContext& ctx,
                                         std::optional<PackedColumns> packed) {
    auto parsed = dnnlPostOps(fused);
    if (!parsed)
        return parsed.error();
    const KernelSpec spec = withoutExtraInputs(fused, extraInputs(parsed.value()));
    MatrixProduct mp;
    if (auto error = readMatrixProduct(spec, &mp))
        return specError(spec, *error);
    if (packed && mp.batches > 1)
        return specError(spec, "its weights are packed, but it reads them as more than one matrix");
    return std::unique_ptr<Kernel>(
        std::make_unique<GemvKernel>(ctx, fused, parsed.value(), mp, packed));
}

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

/// The N-D descriptors of a matrix product reading or writing strided views
/// (KernelHints::views), with its m, n and k.
struct ViewedProduct {
    memory::desc src, weights, dst;
    std::int64_t m = 0, n = 0, k = 0;
};

Result<ViewedProduct> viewedProduct(const KernelSpec& spec) {
    if (!allFloat32(spec) || spec.inputs.size() != 2 || !spec.node->hints.postOps.empty())
        return specError(spec, "strided views need a float32 MatMul without post-ops");
    std::array<Dims, 2> dims, strides;
    for (std::size_t k = 0; k < 2; ++k) {
        const auto view = viewed(spec.inputs[k].shape, matmulView(spec, k));
        if (!view || view->first.size() < 2)
            return specError(spec, "an operand's view is not a permutation of its axes");
        std::tie(dims[k], strides[k]) = *view;
    }
    // The output: the layout written is the result transposed by q, so the result's axis q[j]
    // is stored as the written layout's axis j.
    const Dims& written = spec.outputs[0].shape;
    Dims out = written, outStrides = contiguousStrides(written);
    if (const auto q = matmulView(spec, 2)) {
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

/// Whether an operand has no elements (a product over K = 0), which oneDNN cannot plan.
bool anyEmptyOperand(const KernelSpec& spec) {
    return std::any_of(spec.inputs.begin(), spec.inputs.end(),
                       [](const TensorType& type) { return type.elementCount() == 0; });
}

Result<std::unique_ptr<Kernel>> makeMatmul(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (anyEmptyOperand(spec)) {
        if (!spec.node->hints.postOps.empty() || spec.node->hints.hasViews())
            return specError(spec, "a product of an empty matrix with fused post-ops or views "
                                   "is not supported");
        return makePlainMatmul(spec);
    }
    if (spec.node->hints.hasViews())
        return makeViewedMatmul(spec, ctx);
    std::optional<memory::desc> packed;
    if (const std::string layout = spec.node->hints.packedLayout; !layout.empty()) {
        const auto layouts = readPackedLayout(layout);
        if (!layouts)
            return specError(spec, "its weights' packed layout '" + layout +
                                       "' is not one this process made");
        packed = layouts->second;
    }
    if (isRowTimesMatrix(spec)) {
        const std::optional<PackedColumns> columns = packed ? packedColumns(*packed) : std::nullopt;
        if (!packed || columns)
            return makeGemv(spec, ctx, columns);
    }
    if (!allFloat32(spec) && spec.node->hints.postOps.empty())
        return makePlainMatmul(spec);
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
    if (input != 1 || spec.node->op->kernel.family != KernelFamily::Matmul || !allFloat32(spec) ||
        anyEmptyOperand(spec))
        return {};
    // A GEMV reads the weights as they are; where its rows follow the sizes (a decoder's prompt
    // runs the product over many), packed in blocks of columns, which the GEMV streams as well
    // and the prompt's product needs to run at oneDNN's speed.
    const bool gemv = isRowTimesMatrix(spec);
    if (gemv && !rowsFollowSizes(*spec.node))
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
        if (preferred == calls.weights || preferred.get_size() != calls.weights.get_size() ||
            (gemv && !packedColumns(preferred)))
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

} // namespace placer::cpu
