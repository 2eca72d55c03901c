// Propagating shardings through a region (plan/TensorShard.h).
#include "plan/TensorShard.h"

#include "ir/BatchRule.h"
#include "ir/DType.h"
#include "plan/Split.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace placer {

using namespace batch;

std::string Sharding::text() const {
    switch (kind) {
    case Kind::Replicate:
        return "R";
    case Kind::Shard:
        return "S(" + std::to_string(axis) + ")" +
               (blocks > 1 ? "x" + std::to_string(blocks) : std::string());
    case Kind::Partial:
        return "P";
    }
    return "?";
}

std::string_view collectiveName(Collective::Kind kind) {
    switch (kind) {
    case Collective::Kind::AllReduce:
        return "AllReduce";
    case Collective::Kind::AllGather:
        return "AllGather";
    case Collective::Kind::Reduce:
        return "Reduce";
    case Collective::Kind::Gather:
        return "Gather";
    }
    return "?";
}

std::vector<std::int64_t> shardBounds(std::int64_t extent, const std::vector<Shard>& shards) {
    std::vector<std::int64_t> shares;
    for (const Shard& shard : shards)
        shares.push_back(shard.share);
    const std::vector<std::int64_t> rows = shardRows(extent, shares);
    std::vector<std::int64_t> bounds{0};
    for (std::int64_t r : rows) {
        if (r <= 0)
            return {};
        bounds.push_back(bounds.back() + r);
    }
    return bounds;
}

namespace {

using Kind = Sharding::Kind;
using Read = ShardRead::Kind;

Sharding replicated() {
    return Sharding{};
}
Sharding partial() {
    return Sharding{Kind::Partial, -1, {}};
}
Sharding cut(std::int32_t axis, std::vector<std::int64_t> bounds, std::int32_t blocks = 1) {
    return Sharding{Kind::Shard, axis, std::move(bounds), blocks};
}

ShardRead own() {
    return ShardRead{};
}
ShardRead whole() {
    return ShardRead{Read::Whole, -1, {}};
}
ShardRead sliced(std::int32_t axis, std::vector<std::int64_t> bounds, std::int32_t blocks = 1) {
    return ShardRead{Read::Slice, axis, std::move(bounds), blocks};
}

/// Relay's spellings of the ops the rules know, as ONNX spells them.
std::string_view canonicalOp(std::string_view name) {
    static const std::unordered_map<std::string_view, std::string_view> kRelay = {
        {"add", "Add"},         {"subtract", "Sub"},       {"multiply", "Mul"},
        {"divide", "Div"},      {"nn.relu", "Relu"},       {"sigmoid", "Sigmoid"},
        {"tanh", "Tanh"},       {"negative", "Neg"},       {"exp", "Exp"},
        {"erf", "Erf"},         {"nn.softmax", "Softmax"}, {"transpose", "Transpose"},
        {"nn.matmul", "MatMul"}};
    const auto found = kRelay.find(name);
    return found == kRelay.end() ? name : found->second;
}

bool isUnary(std::string_view op) {
    static const std::set<std::string_view> kOps = {
        "Relu",     "Sigmoid",   "Tanh",       "Erf",   "Exp",      "Log",         "Neg",
        "Abs",      "Sqrt",      "Reciprocal", "Gelu",  "FastGelu", "QuickGelu",   "Softplus",
        "Softsign", "LeakyRelu", "Elu",        "Selu",  "Celu",     "HardSigmoid", "HardSwish",
        "Mish",     "Sin",       "Cos",        "Floor", "Ceil",     "Round",       "Sign",
        "Identity", "Cast",      "Not",        "IsNaN", "Dropout",  "Clip"};
    return kOps.count(op) != 0;
}

/// Unary ops that commute with a sum: a partial sum stays one through them.
bool isLinearUnary(std::string_view op) {
    return op == "Neg" || op == "Identity";
}

bool isElementwise(std::string_view op) {
    static const std::set<std::string_view> kOps = {
        "Add",  "Sub",     "Mul",   "Div", "Pow", "Max", "Min",      "Equal",
        "Less", "Greater", "Where", "And", "Or",  "Mod", "BitShift", "PRelu"};
    return kOps.count(op) != 0;
}

std::int32_t normalised(std::int64_t axis, int rank) {
    return static_cast<std::int32_t>(axis < 0 ? axis + rank : axis);
}

class Propagation {
public:
    Propagation(const Graph& graph, SplitRegion& region) : m_graph(graph), m_region(region) {}

    void run(const std::vector<std::uint32_t>& candidates) {
        m_candidates.insert(candidates.begin(), candidates.end());
        for (std::uint32_t i : candidates) {
            const Node& node = m_graph.nodes()[i];
            TensorShardOp op = decide(node);
            op.inputs.resize(node.inputs.size(), whole());
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                // A value made whole already is read whole, not as the shard's part.
                const ValueRef source = throughCopies(m_graph, node.inputs[k]);
                if (op.inputs[k].kind == Read::Own &&
                    m_summed.count({source.node.index, source.output}))
                    op.inputs[k] = whole();
            }
            op.outputs.resize(node.outputs.size());
            noteCollectives(node, op);
            m_index.emplace(i, m_region.nodes.size());
            m_region.nodes.push_back(NodeId(i));
            m_region.ops.push_back(std::move(op));
        }
        noteExits();
    }

private:
    /// How the region's shards hold `value`: a member's output as its op decided, anything from
    /// outside replicated.
    /// How later readers see `value`: whole on every device once an AllReduce added its
    /// partial sums up (the one before a normalisation serves every reader after it), else as
    /// it is held (a cut stays cut for readers that can take it, each computing its part).
    Sharding of(ValueRef value) const {
        const ValueRef source = throughCopies(m_graph, value);
        if (m_summed.count({source.node.index, source.output}))
            return replicated();
        return heldOf(source);
    }

    Sharding heldOf(ValueRef value) const {
        const ValueRef source = throughCopies(m_graph, value);
        const auto found = m_index.find(source.node.index);
        if (found == m_index.end())
            return replicated();
        const auto& outputs = m_region.ops[found->second].outputs;
        return source.output < outputs.size() ? outputs[source.output] : replicated();
    }

    const TensorType& type(ValueRef value) const { return m_graph.type(value); }

    bool constant(ValueRef value) const {
        const Node& node = m_graph.node(throughCopies(m_graph, value).node);
        return node.isConstant() && dtypeSize(node.outputs[0].dtype) > 0;
    }

    /// A constant input that each shard may read a slice of.
    bool sliceable(ValueRef value) const {
        return constant(value) && !m_index.count(throughCopies(m_graph, value).node.index);
    }

    std::vector<std::int64_t> bounds(std::int64_t extent) const {
        return extent > 0 ? shardBounds(extent, m_region.shards) : std::vector<std::int64_t>{};
    }

    /// The op when it reads everything whole and runs on every shard.
    static TensorShardOp replicatedOp(const Node& node, std::string why) {
        TensorShardOp op;
        op.inputs.assign(node.inputs.size(), whole());
        op.outputs.assign(node.outputs.size(), replicated());
        op.why = std::move(why);
        return op;
    }

    TensorShardOp decide(const Node& node) {
        std::vector<Sharding> in;
        bool anyCut = false;
        for (ValueRef input : node.inputs) {
            in.push_back(of(input));
            anyCut = anyCut || in.back().kind != Kind::Replicate;
        }
        if (node.anyRunTimeShape() || !node.symbolicShapes.empty())
            return replicatedOp(node, "its shapes are known only at run time, so it runs whole");
        const std::string_view op = canonicalOp(node.op->name);
        if (op == "MatMul")
            return matMul(node, in);
        if (op == "Gemm")
            return gemm(node, in);
        if (op == "Conv")
            return conv(node, in);
        if (!anyCut)
            return replicatedOp(node, "it reads only whole values, so every device computes it");
        const bool blocked =
            std::any_of(in.begin(), in.end(), [](const Sharding& s) { return s.blocks > 1; });
        if (blocked && !isUnary(op) && !isElementwise(op) && op != "Split" && op != "Slice")
            return replicatedOp(node, "its input is cut in blocks that only a Split into them "
                                      "keeps, so it reads it whole");
        if (isUnary(op))
            return unary(node, in, op);
        if (isElementwise(op))
            return elementwise(node, in, op);
        if (op == "Transpose")
            return transpose(node, in);
        if (op == "Reshape")
            return reshape(node, in);
        if (op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization")
            return normalisation(node, in, op);
        if (op.starts_with("Reduce"))
            return reduction(node, in, op);
        if (op == "Unsqueeze" || op == "Squeeze")
            return squeezing(node, in, op);
        if (op == "Concat" || op == "Split" || op == "Slice" || op == "Gather")
            return indexing(node, in, op);
        return replicatedOp(node, "no sharding rule for " + std::string(op) +
                                      ", so it reads its inputs whole");
    }

    /// Reads for `node`'s inputs when they should hold `want` on the output's axes (an
    /// element-wise op's broadcast): each input cut alike read as its own, a broadcast one
    /// whole, a whole one of the full extent sliced.
    std::optional<std::vector<ShardRead>> alike(const Node& node, const std::vector<Sharding>& in,
                                                const Sharding& want, int rank) {
        std::vector<ShardRead> reads(node.inputs.size(), whole());
        const std::int64_t extent = want.bounds.back() * want.blocks;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const int r = type(node.inputs[k]).rank();
            const int axis = want.axis - (rank - r);
            if (axis < 0 || type(node.inputs[k]).shape[static_cast<std::size_t>(axis)] == 1)
                continue; // broadcast: every shard reads it whole
            if (in[k].sharded() && in[k].axis == axis && in[k].bounds == want.bounds &&
                in[k].blocks == want.blocks) {
                reads[k] = own();
                continue;
            }
            if (in[k].kind != Kind::Replicate ||
                type(node.inputs[k]).shape[static_cast<std::size_t>(axis)] != extent ||
                (want.blocks > 1 && !sliceable(node.inputs[k])))
                return std::nullopt;
            reads[k] = sliced(axis, want.bounds, want.blocks);
        }
        return reads;
    }

    TensorShardOp unary(const Node& node, const std::vector<Sharding>& in, std::string_view op) {
        if (in[0].kind == Kind::Partial && !isLinearUnary(op))
            return replicatedOp(node, std::string(op) + " of a partial sum needs the sum first");
        if (in[0].kind == Kind::Replicate)
            return replicatedOp(node, "it reads only whole values, so every device computes it");
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.inputs[0] = own();
        out.outputs.assign(node.outputs.size(), in[0]); // Dropout's mask is cut alike
        out.why = std::string(op) + " keeps its input's sharding " + in[0].text();
        return out;
    }

    TensorShardOp elementwise(const Node& node, const std::vector<Sharding>& in,
                              std::string_view op) {
        const int rank = node.outputs[0].rank();
        const auto partials = static_cast<std::size_t>(std::count_if(
            in.begin(), in.end(), [](const Sharding& s) { return s.kind == Kind::Partial; }));
        const bool cutAny =
            std::any_of(in.begin(), in.end(), [](const Sharding& s) { return s.sharded(); });
        TensorShardOp out;
        out.outputs.assign(node.outputs.size(), replicated());
        if (partials > 0 && !cutAny && node.inputs.size() == 2) {
            // Sums of partials are partial; a whole term is added once, by the first shard; a
            // partial sum scaled by a whole value stays partial.
            const bool additive = op == "Add" || op == "Sub";
            if (additive && partials == 2) {
                out.inputs = {own(), own()};
                out.outputs[0] = partial();
                out.why = "a sum of partial sums is one";
                return out;
            }
            const std::size_t p = in[0].kind == Kind::Partial ? 0 : 1;
            if (additive && partials == 1 && (op == "Add" || p == 0) &&
                type(node.inputs[p]) == node.outputs[0]) {
                out.inputs.assign(2, ShardRead{Read::FirstOnly, -1, {}});
                out.inputs[p] = own();
                out.passThrough = static_cast<std::int32_t>(p);
                out.outputs[0] = partial();
                out.why = "the whole term is added once, by the first device, to its partial sum";
                return out;
            }
            if ((op == "Mul" || (op == "Div" && p == 0)) && partials == 1) {
                out.inputs.assign(2, whole());
                out.inputs[p] = own();
                out.outputs[0] = partial();
                out.why = "a partial sum scaled by a whole value stays partial";
                return out;
            }
            return replicatedOp(node, std::string(op) + " of a partial sum needs the sum first");
        }
        if (partials > 0)
            return replicatedOp(node, std::string(op) + " of a partial sum needs the sum first");
        // The first input cut on an axis of the output decides; the others must agree.
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (!in[k].sharded())
                continue;
            const Sharding want =
                cut(in[k].axis + (rank - type(node.inputs[k]).rank()), in[k].bounds, in[k].blocks);
            if (auto reads = alike(node, in, want, rank)) {
                out.inputs = std::move(*reads);
                out.outputs[0] = want;
                out.why = std::string(op) + " follows its inputs' sharding " + want.text();
                return out;
            }
            break;
        }
        return replicatedOp(node, "its inputs are sharded differently, so it reads them whole");
    }

    /// The consumers of `node`'s first output, once the graph's uses are indexed.
    const std::vector<NodeId>& readers(NodeId node) {
        if (m_readers.empty()) {
            m_readers.resize(m_graph.size());
            for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
                for (ValueRef input : m_graph.nodes()[i].inputs)
                    m_readers[throughCopies(m_graph, input).node.index].push_back(NodeId(i));
            }
        }
        return m_readers[node.index];
    }

    /// Which of `blocks` equal blocks of axis `axis` (of `extent`) a Slice takes whole, or
    /// nothing when it takes anything else.
    std::optional<std::int64_t> blockOfSlice(const Node& slice, int axis, std::int64_t extent,
                                             std::int32_t blocks) const {
        if (slice.inputs.size() < 3)
            return std::nullopt;
        const auto starts = constantInts(m_graph, slice.inputs[1]);
        const auto ends = constantInts(m_graph, slice.inputs[2]);
        if (!starts || !ends || starts->size() != 1 || ends->size() != 1)
            return std::nullopt;
        const int rank = type(slice.inputs[0]).rank();
        if (slice.inputs.size() > 3) {
            const auto axes = constantInts(m_graph, slice.inputs[3]);
            if (!axes || axes->size() != 1 || normalised((*axes)[0], rank) != axis)
                return std::nullopt;
        } else if (axis != 0) {
            return std::nullopt;
        }
        if (slice.inputs.size() > 4) {
            const auto steps = constantInts(m_graph, slice.inputs[4]);
            if (!steps || steps->size() != 1 || (*steps)[0] != 1)
                return std::nullopt;
        }
        const std::int64_t width = extent / blocks;
        std::int64_t start = (*starts)[0] < 0 ? (*starts)[0] + extent : (*starts)[0];
        std::int64_t end = (*ends)[0] < 0 ? (*ends)[0] + extent : std::min((*ends)[0], extent);
        if (start % width != 0 || end != start + width)
            return std::nullopt;
        return start / width;
    }

    /// The equal sizes a Split cuts its input's axis `axis` into, or empty.
    std::vector<std::int64_t> equalParts(const Node& split, int axis) const {
        const int rank = type(split.inputs[0]).rank();
        if (normalised(split.attrs.getInt("axis", 0).value_or(0), rank) != axis)
            return {};
        std::vector<std::int64_t> sizes;
        if (split.inputs.size() > 1) {
            const auto given = constantInts(m_graph, split.inputs[1]);
            if (!given)
                return {};
            sizes = *given;
        } else {
            sizes = split.attrs.getInts("split", {}).value_or(std::vector<std::int64_t>{});
        }
        if (sizes.empty()) {
            const std::int64_t extent = type(split.inputs[0]).shape[static_cast<std::size_t>(axis)];
            const auto parts = static_cast<std::int64_t>(split.outputs.size());
            if (parts == 0 || extent % parts != 0)
                return {};
            sizes.assign(split.outputs.size(), extent / parts);
        }
        for (std::int64_t size : sizes) {
            if (size != sizes[0])
                return {};
        }
        return sizes;
    }

    /// A product whose columns a Split takes apart on the last axis (a fused projection's Q, K
    /// and V), directly or through a bias added: the number of its parts, so that each device
    /// takes its share of each part; else 1.
    std::int32_t splitBlocks(const Node& product) {
        const int rank = product.outputs[0].rank();
        const std::int64_t extent = product.outputs[0].shape.back();
        const auto shards = static_cast<std::int64_t>(m_region.shards.size());
        NodeId at = NodeId(static_cast<std::uint32_t>(&product - m_graph.nodes().data()));
        for (int hop = 0; hop < 2; ++hop) {
            const std::vector<NodeId>& next = readers(at);
            // Slices that take the axis apart in equal parts (PyTorch's in_proj as Q, K, V).
            const auto k = static_cast<std::int32_t>(next.size());
            if (k >= 2 && extent % k == 0 && extent / k >= shards) {
                std::set<std::int64_t> parts;
                for (NodeId reader : next) {
                    if (!m_candidates.count(reader.index) ||
                        canonicalOp(m_graph.node(reader).op->name) != "Slice")
                        break;
                    const auto part = blockOfSlice(m_graph.node(reader), rank - 1, extent, k);
                    if (!part)
                        break;
                    parts.insert(*part);
                }
                if (static_cast<std::int32_t>(parts.size()) == k)
                    return k;
            }
            if (next.size() != 1 || !m_candidates.count(next[0].index))
                return 1; // read elsewhere too, or outside the region: one cut for all

            const Node& reader = m_graph.node(next[0]);
            const std::string_view op = canonicalOp(reader.op->name);
            if (op == "Split") {
                const auto parts = equalParts(reader, rank - 1);
                return parts.size() > 1 && parts[0] >= shards
                           ? static_cast<std::int32_t>(parts.size())
                           : 1;
            }
            if (op != "Add" || reader.outputs[0] != product.outputs[0])
                return 1;
            at = next[0];
        }
        return 1;
    }

    /// MatMul: a whole input times a weight's columns is cut on its last axis (Megatron's
    /// column-parallel linear); an input cut on the reduced axis times the weight's rows is a
    /// partial sum (row-parallel); a cut on a batch axis or on the rows passes through.
    TensorShardOp matMul(const Node& node, const std::vector<Sharding>& in) {
        const TensorType& a = type(node.inputs[0]);
        const TensorType& b = type(node.inputs[1]);
        const int rank = node.outputs[0].rank();
        TensorShardOp out;
        out.outputs = {replicated()};
        if (a.rank() < 2 || b.rank() < 2)
            return replicatedOp(node, "a matrix-vector product runs whole");
        const int ka = a.rank() - 1, kb = b.rank() - 2, nb = b.rank() - 1, ma = a.rank() - 2;
        const std::int64_t k = a.shape[static_cast<std::size_t>(ka)];
        const std::int64_t n = b.shape[static_cast<std::size_t>(nb)];
        // Reduced axis cut on both sides (or one side cut, the other a weight): partial sums.
        if (in[0].sharded() && in[0].axis == ka) {
            if (in[1].sharded() && in[1].axis == kb && in[1].bounds == in[0].bounds) {
                out.inputs = {own(), own()};
            } else if (in[1].kind == Kind::Replicate &&
                       b.shape[static_cast<std::size_t>(kb)] == k) {
                out.inputs = {own(), sliced(kb, in[0].bounds)};
            } else {
                return replicatedOp(node, "its inputs are sharded differently");
            }
            out.outputs[0] = partial();
            out.why = "its reduced axis is cut, so each device holds a partial sum "
                      "(row-parallel)";
            return out;
        }
        // A batch axis or the rows of the first input cut: the product keeps it.
        if (in[0].sharded() && in[0].axis < ka && in[1].kind != Kind::Partial) {
            const int axis = in[0].axis + (rank - a.rank());
            const int bAxis = axis - (rank - b.rank());
            if (in[0].axis == ma) {
                if (in[1].kind != Kind::Replicate)
                    return replicatedOp(node, "its inputs are sharded differently");
                out.inputs = {own(), whole()};
            } else if (bAxis < 0 || b.shape[static_cast<std::size_t>(bAxis)] == 1) {
                out.inputs = {own(), whole()};
            } else if (in[1].sharded() && in[1].axis == bAxis && in[1].bounds == in[0].bounds) {
                out.inputs = {own(), own()};
            } else if (in[1].kind == Kind::Replicate) {
                out.inputs = {own(), sliced(bAxis, in[0].bounds)};
            } else {
                return replicatedOp(node, "its inputs are sharded differently");
            }
            out.outputs[0] = cut(axis, in[0].bounds);
            out.why = "its batch axis " + std::to_string(axis) + " is cut (attention by heads)";
            return out;
        }
        if (in[0].kind == Kind::Replicate && in[1].sharded() && in[1].axis == nb) {
            out.inputs = {whole(), own()};
            out.outputs[0] = cut(rank - 1, in[1].bounds);
            out.why = "its second input's columns are cut";
            return out;
        }
        // A whole input, or a partial sum added up first (each device multiplying the whole
        // weight by its partial sum would do every device's work on each), by the weight's
        // columns.
        if (in[0].kind != Kind::Shard && in[1].kind == Kind::Replicate &&
            sliceable(node.inputs[1])) {
            const std::int32_t blocks = splitBlocks(node);
            std::vector<std::int64_t> cuts = bounds(n / blocks);
            if (cuts.empty())
                return replicatedOp(node, "its weight has fewer columns than devices");
            out.inputs = {whole(), sliced(nb, cuts, blocks)};
            out.outputs[0] = cut(rank - 1, std::move(cuts), blocks);
            out.why = std::string(in[0].kind == Kind::Partial ? "its input's partial sums added "
                                                                "up, each"
                                                              : "each") +
                      " device takes its share of the weight's columns (column-parallel)" +
                      (blocks > 1 ? ", of each of the " + std::to_string(blocks) +
                                        " parts taken apart after it"
                                  : std::string());
            return out;
        }
        return replicatedOp(node, "its inputs are sharded in a way no product rule takes");
    }

    /// Gemm: as MatMul for A x B (transB read as B's transpose); C is cut with the columns, or
    /// added once by the first device to a partial sum.
    TensorShardOp gemm(const Node& node, const std::vector<Sharding>& in) {
        if (node.attrs.getInt("transA", 0).value_or(1) != 0 || !sliceable(node.inputs[1]) ||
            in[1].kind != Kind::Replicate)
            return replicatedOp(node, "Gemm is sharded only with its first input not transposed "
                                      "and a constant weight");
        const bool transB = node.attrs.getInt("transB", 0).value_or(0) != 0;
        const TensorType& b = type(node.inputs[1]);
        const int nAxis = transB ? 0 : 1, kAxis = transB ? 1 : 0;
        TensorShardOp out;
        out.outputs = {replicated()};
        const bool hasC = node.inputs.size() > 2;
        if (hasC && in[2].kind != Kind::Replicate)
            return replicatedOp(node, "its bias is sharded");
        if (in[0].kind == Kind::Replicate) {
            std::vector<std::int64_t> cuts = bounds(b.shape[static_cast<std::size_t>(nAxis)]);
            if (cuts.empty())
                return replicatedOp(node, "its weight has fewer columns than devices");
            out.inputs = {whole(), sliced(nAxis, cuts)};
            if (hasC) {
                const TensorType& c = type(node.inputs[2]);
                out.inputs.push_back(
                    c.rank() == 0 || c.shape.back() == 1 ? whole() : sliced(c.rank() - 1, cuts));
            }
            out.outputs[0] = cut(1, std::move(cuts));
            out.why = "each device takes its share of the weight's columns (column-parallel)";
            return out;
        }
        if (in[0].sharded() && in[0].axis == 1) {
            out.inputs = {own(), sliced(kAxis, in[0].bounds)};
            if (hasC)
                out.inputs.push_back(ShardRead{Read::FirstOnly, -1, {}});
            out.outputs[0] = partial();
            out.why = "its reduced axis is cut, so each device holds a partial sum (row-parallel); "
                      "the first adds the bias";
            return out;
        }
        if (in[0].sharded() && in[0].axis == 0) {
            out.inputs = {own(), whole()};
            if (hasC) {
                const TensorType& c = type(node.inputs[2]);
                if (c.rank() == 2 && c.shape[0] != 1)
                    out.inputs.push_back(sliced(0, in[0].bounds));
                else
                    out.inputs.push_back(whole());
            }
            out.outputs[0] = in[0];
            out.why = "its rows are cut";
            return out;
        }
        return replicatedOp(node, "its input is a partial sum");
    }

    /// Conv (one group): a whole input convolved with the weight's output channels is cut on
    /// its channels; an input cut on its channels with the weight's input channels is a partial
    /// sum, the bias added by the first device.
    TensorShardOp conv(const Node& node, const std::vector<Sharding>& in) {
        if (node.attrs.getInt("group", 1).value_or(0) != 1 || !sliceable(node.inputs[1]) ||
            in[1].kind != Kind::Replicate)
            return replicatedOp(node, "a convolution is sharded only in one group with a "
                                      "constant weight");
        const bool hasB = node.inputs.size() > 2;
        TensorShardOp out;
        out.outputs = {replicated()};
        if (in[0].kind == Kind::Replicate) {
            std::vector<std::int64_t> cuts = bounds(type(node.inputs[1]).shape[0]);
            if (cuts.empty())
                return replicatedOp(node, "it has fewer output channels than devices");
            out.inputs = {whole(), sliced(0, cuts)};
            if (hasB)
                out.inputs.push_back(sliced(0, cuts));
            out.outputs[0] = cut(1, std::move(cuts));
            out.why = "each device computes its share of the output channels";
            return out;
        }
        if (in[0].sharded() && in[0].axis == 1) {
            out.inputs = {own(), sliced(1, in[0].bounds)};
            if (hasB)
                out.inputs.push_back(ShardRead{Read::FirstOnly, -1, {}});
            out.outputs[0] = partial();
            out.why = "its input channels are cut, so each device holds a partial sum; the "
                      "first adds the bias";
            return out;
        }
        if (in[0].sharded() && in[0].axis == 0) {
            out.inputs.assign(node.inputs.size(), whole());
            out.inputs[0] = own();
            out.outputs[0] = in[0];
            out.why = "its batch is cut";
            return out;
        }
        return replicatedOp(node, "its input is sharded in a way no convolution rule takes");
    }

    TensorShardOp transpose(const Node& node, const std::vector<Sharding>& in) {
        const int rank = type(node.inputs[0]).rank();
        std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
        for (int k = 0; k < rank; ++k)
            perm[static_cast<std::size_t>(k)] = rank - 1 - k;
        perm = node.attrs.getInts("perm", perm).value_or(perm);
        TensorShardOp out;
        out.inputs = {own()};
        if (in[0].kind == Kind::Partial) {
            out.outputs = {partial()};
        } else {
            const auto at = std::find(perm.begin(), perm.end(), in[0].axis);
            if (at == perm.end())
                return replicatedOp(node, "its permutation does not name the cut axis");
            out.outputs = {cut(static_cast<std::int32_t>(at - perm.begin()), in[0].bounds)};
        }
        out.why = "the cut axis follows the permutation";
        return out;
    }

    /// Reshape: the cut axis followed where the reshape keeps it, splits it (its outermost part
    /// cut, when the cuts fall on whole blocks of the inner ones) or merges it with axes inside
    /// it.
    TensorShardOp reshape(const Node& node, const std::vector<Sharding>& in) {
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.inputs[0] = own();
        if (in[0].kind == Kind::Partial) {
            out.outputs = {partial()};
            out.why = "a reshape of a partial sum is one";
            return out;
        }
        if (!in[0].sharded() || node.inputs.size() < 2 || !constantInts(m_graph, node.inputs[1]))
            return replicatedOp(node, "its target shape is computed, so it reads its input whole");
        const std::vector<std::int64_t>& from = type(node.inputs[0]).shape;
        const std::vector<std::int64_t>& to = node.outputs[0].shape;
        const auto a = static_cast<std::size_t>(in[0].axis);
        auto product = [](const std::vector<std::int64_t>& s, std::size_t b, std::size_t e) {
            std::int64_t p = 1;
            for (std::size_t k = b; k < e && k < s.size(); ++k)
                p *= s[k];
            return p;
        };
        const std::int64_t before = product(from, 0, a);
        const std::int64_t extent = from[a];
        std::size_t b = 0;
        while (b < to.size() && product(to, 0, b) < before)
            ++b;
        if (b >= to.size() || product(to, 0, b) != before)
            return replicatedOp(node, "it moves the cut axis across others, so it reads its "
                                      "input whole");
        std::vector<std::int64_t> cuts = in[0].bounds;
        if (to[b] <= extent) {
            // Kept, or split into to[b] x (the rest): the cuts must fall on whole inner blocks.
            if (extent % to[b] != 0)
                return replicatedOp(node, "it cuts the sharded axis unevenly");
            const std::int64_t inner = extent / to[b];
            for (std::int64_t& c : cuts) {
                if (c % inner != 0)
                    return replicatedOp(node, "the shards' cuts fall inside the blocks it "
                                              "makes, so it reads its input whole");
                c /= inner;
            }
        } else {
            // Merged with the axes inside it.
            std::size_t e = a + 1;
            std::int64_t merged = extent;
            while (e < from.size() && merged < to[b])
                merged *= from[e++];
            if (merged != to[b])
                return replicatedOp(node, "it merges the cut axis unevenly");
            const std::int64_t inner = to[b] / extent;
            for (std::int64_t& c : cuts)
                c *= inner;
        }
        out.outputs = {cut(static_cast<std::int32_t>(b), std::move(cuts))};
        out.why = "the cut axis " + std::to_string(a) + " is axis " + std::to_string(b) +
                  " after the reshape";
        return out;
    }

    TensorShardOp normalisation(const Node& node, const std::vector<Sharding>& in,
                                std::string_view op) {
        const int rank = type(node.inputs[0]).rank();
        const int opset = m_graph.onnxOpset();
        const std::int64_t fallback =
            op == "LayerNormalization" || opset >= 13 || opset == 0 ? -1 : 1;
        const std::int32_t axis =
            normalised(node.attrs.getInt("axis", fallback).value_or(fallback), rank);
        // Softmax before opset 13 flattens from `axis` on: only a cut before it is untouched.
        const bool untouched =
            in[0].sharded() &&
            (in[0].axis < axis ||
             (op != "LayerNormalization" && (opset >= 13 || opset == 0) && in[0].axis > axis));
        const bool restWhole = std::all_of(
            in.begin() + 1, in.end(), [](const Sharding& s) { return s.kind == Kind::Replicate; });
        if (!untouched || !restWhole)
            return replicatedOp(node, std::string(op) + " over the cut axis reads its input whole");
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.inputs[0] = own();
        out.outputs.assign(node.outputs.size(), replicated());
        out.outputs[0] = in[0];
        out.why = std::string(op) + " over other axes keeps the cut";
        return out;
    }

    TensorShardOp reduction(const Node& node, const std::vector<Sharding>& in,
                            std::string_view op) {
        const int rank = type(node.inputs[0]).rank();
        std::optional<std::vector<std::int64_t>> axes = node.attrs.getInts("axes", {});
        if (node.inputs.size() > 1)
            axes = constantInts(m_graph, node.inputs[1]);
        if (!axes || in[0].kind != Kind::Shard)
            return replicatedOp(node, "it reduces over axes it computes, or a partial sum");
        std::vector<std::int64_t> all = *axes;
        if (all.empty()) {
            all.resize(static_cast<std::size_t>(rank));
            std::iota(all.begin(), all.end(), 0);
        }
        for (std::int64_t& axis : all)
            axis = normalised(axis, rank);
        const bool keep = node.attrs.getInt("keepdims", 1).value_or(1) != 0;
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.inputs[0] = own();
        if (std::find(all.begin(), all.end(), in[0].axis) != all.end()) {
            if (op != "ReduceSum")
                return replicatedOp(node, std::string(op) + " over the cut axis reads its "
                                                            "input whole");
            out.outputs = {partial()};
            out.why = "a sum over the cut axis is a partial sum on each device";
            return out;
        }
        const auto dropped = keep ? 0 : std::count_if(all.begin(), all.end(), [&](std::int64_t x) {
            return x < in[0].axis;
        });
        out.outputs = {cut(in[0].axis - static_cast<std::int32_t>(dropped), in[0].bounds)};
        out.why = std::string(op) + " over other axes keeps the cut";
        return out;
    }

    TensorShardOp squeezing(const Node& node, const std::vector<Sharding>& in,
                            std::string_view op) {
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.inputs[0] = own();
        if (in[0].kind == Kind::Partial) {
            out.outputs = {partial()};
            out.why = std::string(op) + " of a partial sum is one";
            return out;
        }
        const int inRank = type(node.inputs[0]).rank();
        const int outRank = node.outputs[0].rank();
        std::optional<std::vector<std::int64_t>> axes = node.attrs.getInts("axes", {});
        if (node.inputs.size() > 1)
            axes = constantInts(m_graph, node.inputs[1]);
        if (!axes || (axes->empty() && op == "Unsqueeze"))
            return replicatedOp(node, "its axes are computed");
        std::vector<std::int64_t> named = *axes;
        for (std::int64_t& axis : named)
            axis = normalised(axis, op == "Unsqueeze" ? outRank : inRank);
        std::int32_t axis = in[0].axis;
        if (op == "Unsqueeze") {
            // The output axes that are not inserted hold the input's, in order.
            std::int32_t seen = -1;
            for (std::int32_t k = 0; k < outRank; ++k) {
                if (std::find(named.begin(), named.end(), k) == named.end() &&
                    ++seen == in[0].axis) {
                    axis = k;
                    break;
                }
            }
        } else {
            if (named.empty()) {
                for (std::int32_t k = 0; k < inRank; ++k) {
                    if (type(node.inputs[0]).shape[static_cast<std::size_t>(k)] == 1)
                        named.push_back(k);
                }
            }
            if (std::find(named.begin(), named.end(), in[0].axis) != named.end())
                return replicatedOp(node, "it removes the cut axis");
            axis -= static_cast<std::int32_t>(std::count_if(
                named.begin(), named.end(), [&](std::int64_t x) { return x < in[0].axis; }));
        }
        out.outputs = {cut(axis, in[0].bounds)};
        out.why = "the cut axis is axis " + std::to_string(axis) + " after " + std::string(op);
        return out;
    }

    TensorShardOp indexing(const Node& node, const std::vector<Sharding>& in, std::string_view op) {
        const int rank = type(node.inputs[0]).rank();
        const std::int32_t axis =
            normalised(node.attrs.getInt("axis", op == "Concat" ? 1 : 0).value_or(0), rank);
        TensorShardOp out;
        out.inputs.assign(node.inputs.size(), whole());
        out.outputs.assign(node.outputs.size(), replicated());
        if (op == "Concat") {
            if (!in[0].sharded() || in[0].axis == axis)
                return replicatedOp(node, "it joins on the cut axis, so it reads its inputs whole");
            auto reads = alike(node, in, in[0], rank);
            if (!reads)
                return replicatedOp(node, "its inputs are sharded differently");
            out.inputs = std::move(*reads);
            out.outputs[0] = in[0];
        } else if (op == "Split") {
            if (in[0].sharded() && in[0].axis == axis && in[0].blocks > 1 &&
                static_cast<std::size_t>(in[0].blocks) == node.outputs.size() &&
                equalParts(node, axis).size() == node.outputs.size()) {
                // Each part is a block: every device splits its share of each.
                out.inputs[0] = own();
                out.outputs.assign(node.outputs.size(), cut(axis, in[0].bounds));
                out.why = "each device splits its share of each part";
                return out;
            }
            if (!in[0].sharded() || in[0].axis == axis)
                return replicatedOp(node, "it splits the cut axis, so it reads its input whole");
            out.inputs[0] = own();
            out.outputs.assign(node.outputs.size(), in[0]);
        } else if (op == "Slice") {
            std::vector<std::int64_t> axes;
            if (node.inputs.size() > 3) {
                const auto named = constantInts(m_graph, node.inputs[3]);
                if (!named)
                    return replicatedOp(node, "its axes are computed");
                axes = *named;
            } else if (const auto starts = constantInts(m_graph, node.inputs[1])) {
                axes.resize(starts->size());
                std::iota(axes.begin(), axes.end(), 0);
            } else {
                return replicatedOp(node, "its axes are computed");
            }
            for (std::int64_t& a : axes)
                a = normalised(a, rank);
            if (in[0].sharded() && in[0].blocks > 1) {
                // One whole block of a blocked cut: each device slices its share of it.
                const std::int64_t extent = in[0].bounds.back() * in[0].blocks;
                if (!blockOfSlice(node, in[0].axis, extent, in[0].blocks))
                    return replicatedOp(node, "it slices its blocked input across the blocks, "
                                              "so it reads it whole");
                out.inputs[0] = own();
                out.outputs[0] = cut(in[0].axis, in[0].bounds);
                out.why = "each device slices its share of the part it takes";
                return out;
            }
            if (!in[0].sharded() || std::find(axes.begin(), axes.end(), in[0].axis) != axes.end())
                return replicatedOp(node, "it slices the cut axis, so it reads its input whole");
            out.inputs[0] = own();
            out.outputs[0] = in[0];
        } else { // Gather
            const int indexRank = type(node.inputs[1]).rank();
            if (in[0].sharded() && in[0].axis != axis && in[1].kind == Kind::Replicate) {
                out.inputs = {own(), whole()};
                out.outputs[0] =
                    cut(in[0].axis < axis ? in[0].axis : in[0].axis + indexRank - 1, in[0].bounds);
            } else if (in[0].kind == Kind::Replicate && in[1].sharded()) {
                out.inputs = {whole(), own()};
                out.outputs[0] = cut(axis + in[1].axis, in[1].bounds);
            } else {
                return replicatedOp(node, "it gathers on the cut axis, so it reads its input "
                                          "whole");
            }
        }
        out.why = std::string(op) + " on another axis keeps the cut";
        return out;
    }

    /// The collectives the reads imply, once per value: a whole read of a cut value gathers
    /// it on every device, of a partial sum adds it up on every device.
    void noteCollectives(const Node& node, const TensorShardOp& op) {
        const auto devices = static_cast<std::int64_t>(m_region.shards.size());
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            if (op.inputs[k].kind != Read::Whole)
                continue;
            const ValueRef value = throughCopies(m_graph, node.inputs[k]);
            const Sharding held = heldOf(value);
            if (held.kind == Kind::Replicate ||
                !m_collected.emplace(value.node.index, value.output).second)
                continue;
            const std::int64_t bytes = type(value).bytes();
            Collective collective;
            collective.value = value;
            collective.reason = node.name;
            if (held.kind == Kind::Partial) {
                collective.kind = Collective::Kind::AllReduce;
                m_summed.emplace(value.node.index, value.output);
                collective.bytes = bytes * devices * (devices - 1);
            } else {
                collective.kind = Collective::Kind::AllGather;
                collective.bytes = bytes * (devices - 1);
            }
            m_region.collectives.push_back(std::move(collective));
        }
    }

    /// Where a cut value or a partial sum leaves the region (read outside it, or an output of
    /// the graph), it is gathered or summed once.
    void noteExits() {
        std::vector<std::uint8_t> member(m_graph.size(), 0);
        for (NodeId id : m_region.nodes)
            member[id.index] = 1;
        std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
        auto exit = [&](ValueRef value, const std::string& reader) {
            const Sharding held = heldOf(value);
            if (held.kind == Kind::Replicate ||
                m_collected.count({value.node.index, value.output}) ||
                !seen.emplace(value.node.index, value.output).second)
                return;
            const auto devices = static_cast<std::int64_t>(m_region.shards.size());
            Collective collective;
            collective.value = value;
            collective.reason = reader;
            collective.kind =
                held.kind == Kind::Partial ? Collective::Kind::Reduce : Collective::Kind::Gather;
            collective.bytes = held.kind == Kind::Partial
                                   ? type(value).bytes() * (devices - 1)
                                   : type(value).bytes() * (devices - 1) / devices;
            m_region.collectives.push_back(std::move(collective));
        };
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            if (member[i])
                continue;
            const Node& node = m_graph.nodes()[i];
            for (ValueRef input : node.inputs) {
                if (member[input.node.index])
                    exit(input, node.name);
            }
        }
        for (const GraphOutput& output : m_graph.outputs()) {
            if (member[output.value.node.index])
                exit(output.value, "the graph's output '" + output.name + "'");
        }
    }

    const Graph& m_graph;
    SplitRegion& m_region;
    std::unordered_map<std::uint32_t, std::size_t> m_index; ///< node -> its place in the region
    std::vector<std::vector<NodeId>> m_readers;
    std::set<std::uint32_t> m_candidates;
    std::set<std::pair<std::uint32_t, std::uint32_t>> m_collected;
    std::set<std::pair<std::uint32_t, std::uint32_t>> m_summed; ///< AllReduced: whole since
};

} // namespace

void shardTensors(const Graph& graph, const std::vector<std::uint32_t>& candidates,
                  SplitRegion& region) {
    region.tensor = true;
    std::int64_t total = 0;
    for (Shard& shard : region.shards) {
        shard.begin = total;
        total += std::max<std::int64_t>(shard.share, 1);
        shard.end = total;
    }
    region.batch = total;
    Propagation(graph, region).run(candidates);
}

} // namespace placer
