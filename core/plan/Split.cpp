// Homogeneous splitting: which nodes a request splits, whether each op allows it, and the
// sharded graph that runs it.
#include "plan/Split.h"

#include "ir/OpSemantics.h"
#include "plan/Glob.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace placer {

namespace {

/// How many illegal ops one request lists one by one before it sums up the rest.
constexpr std::size_t kListedIllegalOps = 12;

std::string trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return std::string(text);
}

int normalized(std::int64_t axis, int rank) {
    if (axis < 0)
        axis += rank;
    return axis < 0 || axis >= rank ? -1 : static_cast<int>(axis);
}

/// The integers a constant node holds (int64 or int32), or std::nullopt.
std::optional<std::vector<std::int64_t>> constantInts(const Graph& graph, ValueRef value) {
    const Node& node = graph.node(value.node);
    if (!node.isConstant() || !node.data)
        return std::nullopt;
    const DType dtype = node.outputs[0].dtype;
    const std::size_t size = static_cast<std::size_t>(dtypeSize(dtype));
    if ((dtype != DType::Int64 && dtype != DType::Int32) || node.data->size() % size != 0)
        return std::nullopt;
    std::vector<std::int64_t> values(node.data->size() / size);
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (dtype == DType::Int64) {
            std::memcpy(&values[i], node.data->data() + i * size, size);
        } else {
            std::int32_t v = 0;
            std::memcpy(&v, node.data->data() + i * size, size);
            values[i] = v;
        }
    }
    return values;
}

/// The value a chain of device copies moves (the value itself when it is no copy's): a plan's
/// inserted copies, applied to the graph, must not change what a region reads.
ValueRef throughCopies(const Graph& graph, ValueRef value) {
    for (std::size_t steps = 0; steps <= graph.size(); ++steps) {
        const Node& node = graph.node(value.node);
        if (!node.isDeviceCopy() || node.inputs.empty())
            return value;
        value = node.inputs[0];
    }
    return value;
}

/// Whether a value is a constant, or a copy of one.
bool isConstantValue(const Graph& graph, ValueRef value) {
    return graph.node(throughCopies(graph, value).node).isConstant();
}

/// Input `k` of the node when it is present (ONNX leaves optional inputs out at the end).
std::optional<ValueRef> inputAt(const Node& node, std::size_t k) {
    if (k >= node.ownInputs())
        return std::nullopt;
    return node.inputs[k];
}

/// An axis list from an attribute or, for newer ONNX opsets, a constant input.
std::optional<std::vector<std::int64_t>> axesOf(const Graph& graph, const Node& node,
                                                std::string_view attribute, std::size_t input) {
    if (node.attrs.has(attribute))
        return node.attrs.getInts(attribute, {});
    if (const auto value = inputAt(node, input))
        return constantInts(graph, *value);
    return std::vector<std::int64_t>{};
}

bool isOnnx(const Node& node) {
    return node.op->dialect == OpDialect::Onnx;
}

/// Where a node reads a shape whose first entry is the batch size, which each shard must read
/// as its own rows: an input index, or -1 (Relay writes it as an attribute: shapeAttribute).
int shapeInput(const Node& node) {
    const std::string& op = node.op->name;
    if (op == "Reshape" || op == "Expand")
        return 1;
    if (op == "Resize" && node.ownInputs() > 3)
        return 3;
    return -1;
}

const char* shapeAttribute(const Node& node) {
    return node.op->name == "reshape" ? "newshape" : nullptr;
}

/// Whether output `k` of a split node carries the batch on axis 0.
bool outputBatched(const Node& node, std::size_t k, std::int64_t batch) {
    const TensorType& type = node.outputs[k];
    if (type.rank() == 0 || type.shape[0] != batch)
        return false;
    // Relay's batch_norm also returns the moving mean and variance, which no row changes.
    return !(node.op->kernel.family == KernelFamily::BatchNorm && k > 0);
}

/// Whether input `k` of `node` is data the op computes over row by row, rather than its
/// weights, statistics, or a shape: only data inputs may carry the batch from outside a region.
bool readsAsData(const Graph& graph, const Node& node, std::size_t k) {
    if (k >= node.ownInputs())
        return true; // a captured value of a body
    switch (node.op->kernel.family) {
    case KernelFamily::Binary:
    case KernelFamily::Unary:
    case KernelFamily::Where:
    case KernelFamily::Cast:
    case KernelFamily::Fill:
    case KernelFamily::Mean:
    case KernelFamily::Concat:
    case KernelFamily::Gather:
    case KernelFamily::GatherElements:
    case KernelFamily::GridSample:
        return true;
    case KernelFamily::Matmul:
    case KernelFamily::QuantizedMatmul:
        return k == 0 || (k == 1 && graph.type(node.inputs[1]).rank() >= 3);
    default:
        return k == 0;
    }
}

} // namespace

Result<SplitRequest> parseSplitRequest(std::string_view text) {
    const std::string spelled = "--split '" + std::string(text) + "'";
    const std::size_t equals = text.rfind('=');
    if (equals == std::string_view::npos)
        return SourceError::sentence(spelled + ": expected NODES=DEV[:SHARE],DEV[:SHARE],...");
    SplitRequest request;
    request.nodePattern = trimmed(text.substr(0, equals));
    if (request.nodePattern.empty())
        return SourceError::sentence(spelled + ": no nodes given before '='");
    std::string_view rest = text.substr(equals + 1);
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string item = trimmed(rest.substr(0, comma));
        if (item.empty())
            return SourceError::sentence(spelled + ": an empty device in the list");
        SplitShare share;
        const std::size_t colon = item.find(':');
        share.device = trimmed(std::string_view(item).substr(0, colon));
        if (share.device.empty())
            return SourceError::sentence(spelled + ": a share without a device ('" + item + "')");
        if (colon != std::string::npos) {
            const std::string number = trimmed(std::string_view(item).substr(colon + 1));
            std::int64_t value = 0;
            const auto [end, error] =
                std::from_chars(number.data(), number.data() + number.size(), value);
            if (error != std::errc() || end != number.data() + number.size() || value < 1 ||
                value > 1'000'000)
                return SourceError::sentence(spelled + ": the share of '" + share.device +
                                             "' must be a whole number from 1 to 1000000, not '" +
                                             number + "'");
            share.share = value;
        }
        for (const SplitShare& earlier : request.shards) {
            if (earlier.device == share.device)
                return SourceError::sentence(spelled + ": device '" + share.device +
                                             "' is named twice");
        }
        request.shards.push_back(share);
        if (comma == std::string_view::npos)
            break;
        rest = rest.substr(comma + 1);
    }
    if (request.shards.size() < 2)
        return SourceError::sentence(spelled + ": a split needs at least two devices");
    return request;
}

std::string formatSplitRequest(const SplitRequest& request) {
    std::string text = request.nodePattern + "=";
    for (std::size_t i = 0; i < request.shards.size(); ++i) {
        text += (i ? "," : "") + request.shards[i].device;
        if (request.shards[i].share > 0)
            text += ":" + std::to_string(request.shards[i].share);
    }
    return text;
}

std::vector<std::int64_t> shardRows(std::int64_t batch, const std::vector<std::int64_t>& shares) {
    std::vector<std::int64_t> rows(shares.size(), 0);
    if (shares.empty() || batch <= 0)
        return rows;
    std::int64_t total = 0;
    for (std::int64_t share : shares)
        total += std::max<std::int64_t>(share, 1);
    std::int64_t given = 0;
    std::vector<std::pair<std::int64_t, std::size_t>> fractions; // (remainder, shard)
    for (std::size_t i = 0; i < shares.size(); ++i) {
        const std::int64_t share = std::max<std::int64_t>(shares[i], 1);
        // batch * share fits: a batch is a tensor extent and a share at most a million.
        rows[i] = batch * share / total;
        given += rows[i];
        fractions.emplace_back(batch * share % total, i);
    }
    std::stable_sort(fractions.begin(), fractions.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < batch; ++k, ++given)
        ++rows[fractions[k % fractions.size()].second];
    return rows;
}

namespace {

/// What batchMixing() knows of each kernel family, before the common check of the results.
std::optional<std::string> familyMixing(const Graph& graph, const Node& node,
                                        const std::vector<bool>& batched) {
    const KernelFamily family = node.op->kernel.family;
    const std::size_t inputs = node.ownInputs();
    const int rank = node.ownInputs() > 0 ? graph.type(node.inputs[0]).rank() : 0;
    auto isBatched = [&](std::size_t k) { return k < batched.size() && batched[k]; };
    auto onlyFirstBatched = [&]() -> std::optional<std::string> {
        if (!isBatched(0)) {
            const auto first = std::find(batched.begin(), batched.end(), true);
            if (first == batched.end())
                return std::string("reads the batch only through a captured value");
            return "reads the batch only through '" +
                   graph.valueName(node.inputs[static_cast<std::size_t>(
                       std::distance(batched.begin(), first))]) +
                   "', which it does not compute over row by row";
        }
        for (std::size_t k = 1; k < inputs; ++k) {
            if (isBatched(k))
                return "reads '" + graph.valueName(node.inputs[k]) +
                       "', which carries the batch, as a parameter (weights, a shape)";
        }
        return std::nullopt;
    };
    auto axisAttr = [&](std::int64_t fallback) {
        return normalized(node.attrs.getInt("axis", fallback).value_or(fallback), rank);
    };
    switch (family) {
    case KernelFamily::Copy:
        return onlyFirstBatched(); // row-major: a leading axis kept is every row kept whole
    case KernelFamily::Cast:
    case KernelFamily::Unary:
    case KernelFamily::Fill:
    case KernelFamily::Binary:
    case KernelFamily::Where:
    case KernelFamily::Mean: {
        const int outRank = node.outputs[0].rank();
        for (std::size_t k = 0; k < inputs; ++k) {
            const TensorType& type = graph.type(node.inputs[k]);
            if (!isBatched(k) && type.rank() == outRank && type.shape[0] != 1)
                return "reads '" + graph.valueName(node.inputs[k]) +
                       "' whole, yet it spans the batch axis (" + std::to_string(type.shape[0]) +
                       " rows)";
        }
        return std::nullopt;
    }
    case KernelFamily::Conv:
    case KernelFamily::ConvTranspose:
    case KernelFamily::QuantizedConv:
    case KernelFamily::Pool:
    case KernelFamily::Lrn:
    case KernelFamily::InstanceNorm:
    case KernelFamily::SpaceDepth:
    case KernelFamily::Resize:
    case KernelFamily::Pad:
    case KernelFamily::Expand:
    case KernelFamily::Tile:
        return onlyFirstBatched();
    case KernelFamily::BatchNorm:
        if (node.attrs.getInt("training_mode", 0).value_or(0) != 0 ||
            (isOnnx(node) && node.outputs.size() > 1))
            return "is a BatchNormalization in training mode, whose statistics are over the "
                   "batch";
        return onlyFirstBatched();
    case KernelFamily::LayerNorm:
        if (axisAttr(-1) == 0)
            return "normalises over the batch axis (axis 0)";
        return onlyFirstBatched();
    case KernelFamily::Softmax:
    case KernelFamily::Hardmax: {
        const std::int64_t fallback = isOnnx(node) && graph.onnxOpset() < 13 ? 1 : -1;
        if (axisAttr(fallback) <= 0)
            return std::string(family == KernelFamily::Softmax ? "takes a softmax"
                                                               : "takes a hardmax") +
                   " over the batch axis (axis 0)";
        return onlyFirstBatched();
    }
    case KernelFamily::Reduce: {
        const ReduceFn fn = node.op->kernel.reduce();
        std::vector<std::int64_t> axes;
        if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
            axes = {node.attrs.getInt("axis", 0).value_or(0)};
        } else {
            const auto read = axesOf(graph, node, isOnnx(node) ? "axes" : "axis", 1);
            if (!read)
                return std::string("reduces over axes that are not constants");
            axes = *read;
            if (!isOnnx(node) && node.attrs.getBool("exclude", false).value_or(false)) {
                // Relay's exclude: every axis but the listed ones. 0 listed keeps the batch.
                const bool keepsBatch = std::any_of(
                    axes.begin(), axes.end(), [&](auto a) { return normalized(a, rank) == 0; });
                return keepsBatch ? onlyFirstBatched()
                                  : std::optional<std::string>("reduces over the batch axis");
            }
        }
        const bool all =
            axes.empty() &&
            !(isOnnx(node) && node.attrs.getInt("noop_with_empty_axes", 0).value_or(0) != 0);
        if (all ||
            std::any_of(axes.begin(), axes.end(), [&](auto a) { return normalized(a, rank) == 0; }))
            return "reduces over the batch axis";
        return onlyFirstBatched();
    }
    case KernelFamily::Transpose: {
        const auto perm = node.attrs.getInts(isOnnx(node) ? "perm" : "axes", {});
        if (!perm || perm->empty() || normalized(perm->front(), rank) != 0)
            return "moves the batch axis from the front";
        return onlyFirstBatched();
    }
    case KernelFamily::Concat:
        if (axisAttr(0) == 0)
            return "concatenates along the batch axis";
        for (std::size_t k = 0; k < inputs; ++k) {
            if (!isBatched(k))
                return "concatenates '" + graph.valueName(node.inputs[k]) +
                       "', which does not carry the batch";
        }
        return std::nullopt;
    case KernelFamily::Split:
        if (axisAttr(0) == 0)
            return "splits along the batch axis";
        return onlyFirstBatched();
    case KernelFamily::Slice: {
        // The result keeps all the batch's rows (checked above); only a reversal can reorder
        // them, with a negative step on axis 0.
        std::optional<std::vector<std::int64_t>> axes, steps;
        if (isOnnx(node) && inputs > 1) {
            axes = inputAt(node, 3) ? constantInts(graph, node.inputs[3])
                                    : std::optional<std::vector<std::int64_t>>();
            steps = inputAt(node, 4) ? constantInts(graph, node.inputs[4])
                                     : std::optional<std::vector<std::int64_t>>();
            const auto starts = constantInts(graph, node.inputs[1]);
            if (!starts)
                return std::string("slices with bounds that are not constants");
            if (!axes) {
                if (inputAt(node, 3))
                    return std::string("slices axes that are not constants");
                axes = std::vector<std::int64_t>(starts->size());
                std::iota(axes->begin(), axes->end(), 0);
            }
        } else {
            axes = node.attrs.getInts("axes", {});
            steps = node.attrs.getInts(isOnnx(node) ? "steps" : "strides", {});
            if (axes && axes->empty()) {
                axes->resize(node.attrs.getInts(isOnnx(node) ? "starts" : "begin", {})
                                 .value_or(std::vector<std::int64_t>{})
                                 .size());
                std::iota(axes->begin(), axes->end(), 0);
            }
        }
        for (std::size_t k = 0; axes && k < axes->size(); ++k) {
            if (normalized((*axes)[k], rank) == 0 && steps && k < steps->size() && (*steps)[k] != 1)
                return std::string("steps through the batch axis");
        }
        return onlyFirstBatched();
    }
    case KernelFamily::Gather: {
        const bool data = isBatched(0), indices = isBatched(1);
        const int axis =
            isOnnx(node)
                ? axisAttr(0)
                : (node.attrs.getInt("axis", -1000).value_or(0) == -1000 ? -1 : axisAttr(0));
        if (data && indices)
            return std::string("gathers rows of a batched value with batched indices");
        if (data && axis == 0)
            return std::string("gathers along the batch axis");
        if (data && axis < 0)
            return std::string("gathers from the flattened value, batch and all");
        if (indices && axis != 0)
            return std::string("reads batched indices into another axis");
        return std::nullopt;
    }
    case KernelFamily::GatherElements:
    case KernelFamily::CumSum:
    case KernelFamily::TopK: {
        const std::int64_t fallback = family == KernelFamily::TopK ? -1 : 0;
        int axis = axisAttr(fallback);
        if (family == KernelFamily::CumSum) {
            const auto values = inputs > 1 ? constantInts(graph, node.inputs[1])
                                           : std::optional<std::vector<std::int64_t>>();
            axis = values && values->size() == 1 ? normalized(values->front(), rank) : -1;
        }
        if (axis <= 0)
            return std::string("works along the batch axis");
        if (family == KernelFamily::GatherElements)
            return std::nullopt; // data and indices both batched, or indices whole (broadcast)
        return onlyFirstBatched();
    }
    case KernelFamily::Matmul:
    case KernelFamily::QuantizedMatmul: {
        const bool a = isBatched(0), b = isBatched(1);
        const int rankB = inputs > 1 ? graph.type(node.inputs[1]).rank() : 0;
        if (node.op->name == "Gemm" && node.attrs.getInt("transA", 0).value_or(0) != 0)
            return std::string("reads its first matrix transposed, contracting over the batch");
        if (!a)
            return std::string("contracts over the batch axis of its second operand");
        if (b && (rank < 3 || rankB < 3))
            return std::string("multiplies two batched matrices, contracting over the batch");
        if (node.op->name == "Gemm" && inputs > 2 && !isBatched(2)) {
            const TensorType& c = graph.type(node.inputs[2]);
            if (c.rank() == 2 && c.shape[0] != 1)
                return "adds '" + graph.valueName(node.inputs[2]) +
                       "' whole, yet it spans the batch axis";
        }
        return std::nullopt;
    }
    case KernelFamily::Trilu:
    case KernelFamily::Det:
        if (rank < 3)
            return std::string("works on the matrix the batch is part of");
        return onlyFirstBatched();
    case KernelFamily::GridSample:
        return std::nullopt; // input and grid share the batch; the outputs keep it (above)
    case KernelFamily::Quantize:
        if (node.attrs.getInt("axis", 1).value_or(1) == 0 && inputs > 1 &&
            graph.type(node.inputs[1]).rank() == 1)
            return std::string("quantizes per row of the batch axis");
        return onlyFirstBatched();
    default:
        return "(" + node.op->name + ") is not known to treat the rows of the batch independently";
    }
}

} // namespace

std::optional<std::string> batchMixing(const Graph& graph, const Node& node,
                                       const std::vector<bool>& batched, std::int64_t batch) {
    const KernelFamily family = node.op->kernel.family;
    if (node.subgraphs.size() > 0)
        return "is control flow (" + node.op->name + "), whose bodies are not split";
    if (family == KernelFamily::None)
        return "has no kernel";
    if (auto why = familyMixing(graph, node, batched))
        return why;
    // Every result must keep the batch leading; only Relay batch_norm's statistics are exempt.
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
        if (family == KernelFamily::BatchNorm && k > 0 && !isOnnx(node))
            continue;
        const TensorType& type = node.outputs[k];
        if (type.rank() == 0 || type.shape[0] != batch) {
            std::string shape;
            for (std::int64_t d : type.shape)
                shape += (shape.empty() ? "" : "x") + std::to_string(d);
            return "gives a result (" + (shape.empty() ? std::string("a scalar") : shape) +
                   ") whose first axis is not the batch of " + std::to_string(batch) +
                   ": it folds or moves the batch axis";
        }
    }
    return std::nullopt;
}

SplitAnalysis analyzeSplits(const Graph& graph, const DeviceSet& devices,
                            const std::vector<SplitRequest>& requests) {
    SplitAnalysis analysis;
    const std::size_t n = graph.size();
    analysis.regionOf.assign(n, -1);
    if (requests.empty())
        return analysis;
    std::vector<std::uint8_t> candidate(n, 0), member(n, 0);
    std::vector<std::vector<std::uint32_t>> consumers; // filled when a region is split
    std::vector<std::uint8_t> isOutput(n, 0);
    for (const GraphOutput& output : graph.outputs())
        isOutput[output.value.node.index] = 1;
    for (std::size_t r = 0; r < requests.size(); ++r) {
        const SplitRequest& request = requests[r];
        SplitRegion region;
        region.request = static_cast<std::int32_t>(r);
        region.name = "split" + std::to_string(r + 1);
        const std::string spelled = "--split '" + formatSplitRequest(request) + "'";
        auto conflict = [&](std::vector<NodeId> nodes, std::string message,
                            std::string suggestion) {
            analysis.conflicts.push_back(Conflict{ConflictKind::Split,
                                                  std::move(nodes),
                                                  {spelled},
                                                  std::move(message),
                                                  std::move(suggestion)});
        };
        // The devices and their shares.
        bool devicesKnown = true;
        std::vector<std::int64_t> shares;
        for (const SplitShare& share : request.shards) {
            const auto device = devices.find(share.device);
            if (!device) {
                conflict({},
                         spelled + " names unknown device '" + share.device +
                             "' (devices: " + devices.namesList() + "); nothing is split",
                         "use devices among " + devices.namesList());
                devicesKnown = false;
                continue;
            }
            region.shards.push_back(Shard{*device, std::max<std::int64_t>(share.share, 1), 0, 0});
            shares.push_back(share.share);
        }
        auto isRegionDevice = [&](DeviceId device) {
            return std::any_of(region.shards.begin(), region.shards.end(),
                               [&](const Shard& s) { return s.device == device; });
        };
        if (!devicesKnown || region.shards.size() < 2) {
            if (devicesKnown)
                conflict({}, spelled + " names fewer than two devices; nothing is split",
                         "name two devices or more");
            region.shards.clear();
            analysis.regions.push_back(std::move(region));
            continue;
        }
        // The nodes it names ('|' joins several names or globs), less those that cannot be in it.
        std::vector<std::string_view> alternatives;
        for (std::string_view rest = request.nodePattern;;) {
            const std::size_t bar = rest.find('|');
            alternatives.push_back(rest.substr(0, bar));
            if (bar == std::string_view::npos)
                break;
            rest.remove_prefix(bar + 1);
        }
        std::vector<std::uint32_t> candidates;
        std::vector<NodeId> overlapping, pinnedAway;
        std::vector<std::pair<std::uint32_t, std::string>> illegal;
        bool matchedAny = false;
        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = graph.nodes()[i];
            if (node.role() != OpRole::Compute)
                continue;
            bool hit = false;
            for (std::string_view pattern : alternatives) {
                hit = hit || globMatch(pattern, node.name);
                for (const std::string& alias : node.aliases)
                    hit = hit || globMatch(pattern, alias);
            }
            if (!hit)
                continue;
            matchedAny = true;
            if (analysis.regionOf[i] >= 0) {
                overlapping.push_back(NodeId(i));
            } else if (node.pin.active() && !isRegionDevice(node.pin.device)) {
                pinnedAway.push_back(NodeId(i));
            } else if (nodeHostOnly(node)) {
                illegal.emplace_back(i, "runs on the host only, so it cannot be split");
            } else {
                const DType dtype = kernelDType(graph, node);
                std::string missing;
                for (const Shard& shard : region.shards) {
                    if (!nodeRunsOn(node, devices[shard.device].kind, dtype))
                        missing = devices[shard.device].name;
                }
                if (!missing.empty())
                    illegal.emplace_back(i, "has no kernel on '" + missing + "'");
                else
                    candidates.push_back(i);
            }
        }
        if (!matchedAny) {
            conflict({}, spelled + " matches no op; nothing is split",
                     "name ops by name, alias or glob ('*' is the whole graph)");
            region.shards.clear();
            analysis.regions.push_back(std::move(region));
            continue;
        }
        auto names = [&](const std::vector<NodeId>& ids) {
            std::string text;
            for (std::size_t k = 0; k < ids.size() && k < 3; ++k)
                text += (k ? ", '" : "'") + graph.node(ids[k]).name + "'";
            if (ids.size() > 3)
                text += " and " + std::to_string(ids.size() - 3) + " more";
            return text;
        };
        if (!overlapping.empty()) {
            const std::int32_t other = analysis.regionOf[overlapping.front().index];
            conflict(overlapping,
                     spelled + " names " + names(overlapping) + ", already split by '--split " +
                         formatSplitRequest(requests[static_cast<std::size_t>(other)]) +
                         "': regions may neither overlap nor nest, so the first one keeps them",
                     "give each node to one --split");
        }
        if (!pinnedAway.empty()) {
            std::vector<std::string> sources = {spelled};
            for (NodeId id : pinnedAway)
                sources.push_back(graph.node(id).pin.origin);
            analysis.conflicts.push_back(
                Conflict{ConflictKind::Split, pinnedAway, sources,
                         names(pinnedAway) + " " + (pinnedAway.size() == 1 ? "is" : "are") +
                             " pinned to a device the split does not use; the pin wins and " +
                             (pinnedAway.size() == 1 ? "it runs" : "they run") + " unsplit",
                         "remove the pin, or pin to one of the split's devices"});
        }
        for (std::uint32_t i : candidates)
            candidate[i] = 1;
        // The batch: the first axis of the first value the region reads as data that is no
        // constant.
        for (std::uint32_t i : candidates) {
            const Node& node = graph.nodes()[i];
            for (std::size_t k = 0; k < node.inputs.size() && region.batch == 0; ++k) {
                const ValueRef input = node.inputs[k];
                const TensorType& type = graph.type(input);
                if (!candidate[throughCopies(graph, input).node.index] &&
                    !isConstantValue(graph, input) && type.rank() > 0 &&
                    readsAsData(graph, node, k))
                    region.batch = type.shape[0];
            }
            if (region.batch != 0)
                break;
        }
        const auto shardCount = static_cast<std::int64_t>(region.shards.size());
        bool splittable = !candidates.empty();
        if (splittable && region.batch == 0) {
            conflict({},
                     spelled + ": its ops read no value that carries a batch, only constants; "
                               "nothing is split",
                     "split ops that compute on the model's inputs");
            splittable = false;
        } else if (splittable && region.batch < 0) {
            conflict({}, spelled + ": the batch size of the values it reads is not known",
                     "give the inputs' shapes (--input-shape)");
            splittable = false;
        } else if (splittable && region.batch < shardCount) {
            conflict({},
                     spelled + ": the batch of " + std::to_string(region.batch) +
                         " is smaller than its " + std::to_string(shardCount) +
                         " shards; nothing is split",
                     "split across at most " + std::to_string(region.batch) +
                         " devices, or run a larger batch");
            splittable = false;
        }
        std::vector<std::int64_t> rows;
        if (splittable) {
            rows = shardRows(region.batch, shares);
            for (std::size_t s = 0; s < rows.size(); ++s) {
                if (rows[s] == 0) {
                    conflict({},
                             spelled + ": '" + devices[region.shards[s].device].name +
                                 "' would get no rows of the batch of " +
                                 std::to_string(region.batch) + "; nothing is split",
                             "give it a larger share or leave it out");
                    splittable = false;
                    break;
                }
            }
        }
        // One pass in graph order: an op joins the region when it reads the batch and treats its
        // rows independently; one that does not leaves it, and what it computes enters again as
        // a value from outside. A value from outside carries the batch when it is no constant,
        // its first axis is the batch, and an op of the region reads it as data (not as its
        // weights or shape): decided once per value, at its first reader.
        std::unordered_map<std::uint32_t, std::vector<bool>> batchedOutputs;
        std::map<std::pair<std::uint32_t, std::uint32_t>, bool> outside;
        auto batchedValue = [&](ValueRef read, bool asData) {
            const ValueRef value = throughCopies(graph, read);
            if (member[value.node.index])
                return static_cast<bool>(batchedOutputs[value.node.index][value.output]);
            const auto key = std::pair(value.node.index, value.output);
            if (const auto found = outside.find(key); found != outside.end())
                return found->second;
            const TensorType& type = graph.type(value);
            const bool batched = asData && !isConstantValue(graph, value) && type.rank() > 0 &&
                                 type.shape[0] == region.batch;
            outside.emplace(key, batched);
            return batched;
        };
        // Values from before the region first: any reader that takes one as data decides.
        for (std::uint32_t i : splittable ? candidates : std::vector<std::uint32_t>{}) {
            const Node& node = graph.nodes()[i];
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                const ValueRef input = node.inputs[k];
                if (!candidate[throughCopies(graph, input).node.index] &&
                    readsAsData(graph, node, k))
                    batchedValue(input, true);
            }
        }
        std::size_t legal = 0;
        for (std::uint32_t i : splittable ? candidates : std::vector<std::uint32_t>{}) {
            const Node& node = graph.nodes()[i];
            std::vector<bool> batched(node.ownInputs(), false);
            bool any = false;
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                const bool b = batchedValue(node.inputs[k], readsAsData(graph, node, k));
                if (k < batched.size())
                    batched[k] = b;
                any = any || b;
            }
            if (!any)
                continue; // computes nothing from the batch: it runs once, unsplit
            if (auto why = batchMixing(graph, node, batched, region.batch)) {
                illegal.emplace_back(i, *why);
                continue;
            }
            member[i] = 1;
            ++legal;
            std::vector<bool> outputs(node.outputs.size());
            for (std::size_t k = 0; k < outputs.size(); ++k)
                outputs[k] = outputBatched(node, k, region.batch);
            batchedOutputs.emplace(i, std::move(outputs));
            region.nodes.push_back(NodeId(i));
        }
        std::stable_sort(illegal.begin(), illegal.end());
        for (std::size_t k = 0; k < illegal.size() && k < kListedIllegalOps; ++k) {
            const Node& node = graph.nodes()[illegal[k].first];
            const std::string rest = legal == 0
                                         ? "nothing is left to split"
                                         : "the plan splits the largest legal part without it: " +
                                               std::to_string(legal) + " of the " +
                                               std::to_string(legal + illegal.size()) +
                                               " ops it names that read the batch";
            conflict({NodeId(illegal[k].first)},
                     "'" + node.name + "' (" + node.op->name +
                         ") cannot be split on the batch: it " + illegal[k].second,
                     rest + (node.pin.active() ? "" : "; it runs unsplit"));
        }
        if (illegal.size() > kListedIllegalOps) {
            std::vector<NodeId> rest;
            for (std::size_t k = kListedIllegalOps; k < illegal.size(); ++k)
                rest.push_back(NodeId(illegal[k].first));
            conflict(rest,
                     std::to_string(rest.size()) + " more ops named by " + spelled +
                         " cannot be split on the batch, such as " + names(rest),
                     "see each op's properties");
        }
        for (std::uint32_t i : candidates)
            candidate[i] = 0;
        if (region.nodes.empty()) {
            if (splittable && illegal.empty())
                conflict({},
                         spelled + ": none of the ops it names reads the batch; nothing is split",
                         "name the ops that compute on the batch");
            for (NodeId id : region.nodes)
                member[id.index] = 0;
            region.shards.clear();
            region.batch = splittable ? region.batch : 0;
            analysis.regions.push_back(std::move(region));
            continue;
        }
        std::int64_t begin = 0;
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            region.shards[s].begin = begin;
            begin += rows[s];
            region.shards[s].end = begin;
        }
        // What crosses its border. A device copy between two of its nodes (a plan's inserted
        // copy, applied to the graph) is bypassed: each shard reads its own rows.
        std::set<std::pair<std::uint32_t, std::uint32_t>> seenIn, seenOut;
        for (NodeId id : region.nodes) {
            for (ValueRef input : graph.node(id).inputs) {
                if (member[throughCopies(graph, input).node.index] ||
                    !seenIn.emplace(input.node.index, input.output).second)
                    continue;
                (batchedValue(input, false) ? region.inputs : region.shared).push_back(input);
            }
        }
        if (consumers.empty()) {
            consumers.resize(n);
            for (std::uint32_t i = 0; i < n; ++i) {
                for (ValueRef input : graph.nodes()[i].inputs)
                    consumers[input.node.index].push_back(i);
            }
        }
        std::vector<std::uint8_t> bypassed(n, 0);
        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = graph.nodes()[i];
            if (!node.isDeviceCopy() || isOutput[i] || consumers[i].empty() ||
                !member[throughCopies(graph, ValueRef{NodeId(i), 0}).node.index])
                continue;
            bool onlyMembers = true;
            for (std::uint32_t c : consumers[i])
                onlyMembers = onlyMembers && member[c];
            if (onlyMembers) {
                bypassed[i] = 1;
                region.bypassed.push_back(NodeId(i));
            }
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            if (member[i] || bypassed[i])
                continue;
            for (ValueRef input : graph.nodes()[i].inputs) {
                if (member[input.node.index] &&
                    seenOut.emplace(input.node.index, input.output).second)
                    region.outputs.push_back(input);
            }
        }
        for (const GraphOutput& output : graph.outputs()) {
            if (member[output.value.node.index] &&
                seenOut.emplace(output.value.node.index, output.value.output).second)
                region.outputs.push_back(output.value);
        }
        std::sort(region.outputs.begin(), region.outputs.end(), [](ValueRef a, ValueRef b) {
            return std::pair(a.node.index, a.output) < std::pair(b.node.index, b.output);
        });
        for (NodeId id : region.nodes) {
            analysis.regionOf[id.index] = static_cast<std::int32_t>(r);
            member[id.index] = 0;
        }
        analysis.regions.push_back(std::move(region));
    }
    return analysis;
}

namespace {

class Sharder {
public:
    Sharder(const Graph& graph, const Plan& plan) : m_in(graph), m_plan(plan) {
        m_regionOf.assign(graph.size(), -1);
        m_bypassed.assign(graph.size(), 0);
        for (std::size_t r = 0; r < plan.splits.size(); ++r) {
            for (NodeId id : plan.splits[r].nodes)
                m_regionOf[id.index] = static_cast<std::int32_t>(r);
            for (NodeId id : plan.splits[r].bypassed)
                m_bypassed[id.index] = 1;
        }
    }

    ShardedGraph run() {
        ShardedGraph& out = m_out;
        out.graph.name = m_in.name;
        out.graph.sourceFormat = m_in.sourceFormat;
        out.graph.properties = m_in.properties;
        m_mapped.resize(m_in.size());
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            if (m_bypassed[i])
                continue; // a copy between two split nodes: each shard reads its own rows
            if (m_regionOf[i] < 0)
                copyNode(i);
            else
                shardNode(i);
        }
        for (const GraphOutput& output : m_in.outputs()) {
            GraphOutput copy = output;
            copy.value = whole(output.value);
            out.graph.addOutput(copy);
        }
        return std::move(m_out);
    }

private:
    const SplitRegion& regionOf(std::uint32_t node) const {
        return m_plan.splits[static_cast<std::size_t>(m_regionOf[node])];
    }

    bool batchedOutput(ValueRef value) const {
        return outputBatched(m_in.node(value.node), value.output, regionOf(value.node.index).batch);
    }

    /// A name no node of either graph has.
    std::string freshName(const std::string& base) const {
        std::string name = base;
        for (int k = 2; m_out.graph.find(name) || m_in.find(name); ++k)
            name = base + "_" + std::to_string(k);
        return name;
    }

    ValueRef add(Node node, NodeId origin, std::int32_t region, std::int32_t shard) {
        const NodeId id = m_out.graph.addNode(std::move(node));
        m_out.origin.push_back(origin);
        m_out.region.push_back(region);
        m_out.shard.push_back(shard);
        return ValueRef{id, 0};
    }

    Pin holdAt(DeviceId device, const std::string& origin) const {
        return Pin{PinKind::Plain, device, origin};
    }

    /// The whole value in the sharded graph: as it is outside a region; a region's result
    /// concatenated from its shards.
    ValueRef whole(ValueRef value) {
        const std::int32_t r = m_regionOf[value.node.index];
        if (r < 0)
            return m_mapped[value.node.index][value.output];
        const auto& shards = m_shardValues.at(value.node.index);
        if (!batchedOutput(value))
            return shards[0][value.output];
        const auto key = std::pair(value.node.index, value.output);
        if (const auto found = m_concats.find(key); found != m_concats.end())
            return found->second;
        const SplitRegion& region = regionOf(value.node.index);
        Node concat;
        concat.op = OpRegistry::global().find("Concat");
        concat.name = freshName(m_in.valueName(value) + "/" + region.name + ".concat");
        concat.attrs.set("axis", std::int64_t{0});
        for (const auto& shard : shards)
            concat.inputs.push_back(shard[value.output]);
        concat.outputs = {m_in.type(value)};
        const ValueRef made = add(std::move(concat), NodeId(), r, -1);
        m_concats.emplace(key, made);
        return made;
    }

    /// What shard `s` of region `r` reads for `value`.
    ValueRef shardInput(ValueRef value, std::int32_t r, std::size_t s) {
        const SplitRegion& region = m_plan.splits[static_cast<std::size_t>(r)];
        if (const ValueRef source = throughCopies(m_in, value); m_regionOf[source.node.index] == r)
            return m_shardValues.at(source.node.index)[s][source.output];
        const std::int32_t from = m_regionOf[value.node.index];
        const bool fromRegion = from >= 0;
        const TensorType& type = m_in.type(value);
        // The analysis decided which values entering the region carry the batch.
        if (std::find(region.inputs.begin(), region.inputs.end(), value) == region.inputs.end())
            return whole(value);
        if (fromRegion && sameShards(regionOf(value.node.index), region))
            return m_shardValues.at(value.node.index)[s][value.output]; // adjacent, alike
        const auto key = std::tuple(value.node.index, value.output, r);
        auto found = m_splits.find(key);
        if (found == m_splits.end()) {
            Node split;
            split.op = OpRegistry::global().find("Split");
            split.name = freshName(m_in.valueName(value) + "/" + region.name + ".split");
            split.attrs.set("axis", std::int64_t{0});
            split.inputs = {whole(value)};
            for (const Shard& shard : region.shards) {
                TensorType part = type;
                part.shape[0] = shard.rows();
                split.outputs.push_back(part);
            }
            // It runs where the value is, so that each device receives only its rows.
            const DeviceId at = fromRegion ? regionOf(value.node.index).shards[0].device
                                           : m_plan.devices[value.node.index];
            if (at.valid())
                split.pin = holdAt(at, "--split " + region.name);
            const ValueRef made = add(std::move(split), NodeId(), r, -1);
            std::vector<ValueRef> parts;
            for (std::uint32_t k = 0; k < region.shards.size(); ++k)
                parts.push_back(ValueRef{made.node, k});
            found = m_splits.emplace(key, std::move(parts)).first;
        }
        return found->second[s];
    }

    static bool sameShards(const SplitRegion& a, const SplitRegion& b) {
        if (a.shards.size() != b.shards.size() || a.batch != b.batch)
            return false;
        for (std::size_t s = 0; s < a.shards.size(); ++s) {
            if (a.shards[s].device != b.shards[s].device ||
                a.shards[s].begin != b.shards[s].begin || a.shards[s].end != b.shards[s].end)
                return false;
        }
        return true;
    }

    void copyNode(std::uint32_t i) {
        Node node = m_in.nodes()[i];
        for (ValueRef& input : node.inputs)
            input = whole(input);
        // Held where the user's plan put it, as the optimiser holds nodes.
        if (node.role() == OpRole::Compute && !node.pin.active() && m_plan.devices[i].valid())
            node.pin = holdAt(m_plan.devices[i], "plan");
        const std::size_t outputs = node.outputs.size();
        const ValueRef made = add(std::move(node), NodeId(i), -1, -1);
        m_mapped[i].resize(outputs);
        for (std::uint32_t k = 0; k < outputs; ++k)
            m_mapped[i][k] = ValueRef{made.node, k};
    }

    /// A constant like `value` (integers) with its first entry `first`: a shard's own shape.
    ValueRef shapeConstant(ValueRef value, std::int64_t first, const std::string& name,
                           std::int32_t r, std::size_t s) {
        const Node& original = m_in.node(value.node);
        Node constant = original;
        constant.name = freshName(name);
        constant.aliases.clear();
        constant.pin = Pin{};
        constant.rejectedPins.clear();
        TensorData data = *original.data;
        if (original.outputs[0].dtype == DType::Int64) {
            std::memcpy(data.data(), &first, sizeof first);
        } else {
            const auto narrow = static_cast<std::int32_t>(first);
            std::memcpy(data.data(), &narrow, sizeof narrow);
        }
        constant.data = std::make_shared<const TensorData>(std::move(data));
        return add(std::move(constant), NodeId(), r, static_cast<std::int32_t>(s));
    }

    void shardNode(std::uint32_t i) {
        const Node& node = m_in.nodes()[i];
        const std::int32_t r = m_regionOf[i];
        const SplitRegion& region = regionOf(i);
        auto& shards = m_shardValues[i];
        shards.resize(region.shards.size());
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            const Shard& shard = region.shards[s];
            const std::string suffix = "/" + region.name + "." + std::to_string(s);
            Node copy = node;
            copy.name = freshName(node.name + suffix);
            copy.aliases.clear();
            copy.rejectedPins.clear();
            copy.pin = holdAt(shard.device, "--split " + region.name);
            for (ValueRef& input : copy.inputs)
                input = shardInput(input, r, s);
            for (std::size_t k = 0; k < copy.outputs.size(); ++k) {
                if (outputBatched(node, k, region.batch))
                    copy.outputs[k].shape[0] = shard.rows();
            }
            // A shape that spells out the batch reads the shard's rows instead.
            if (const int k = shapeInput(node); k >= 0) {
                const ValueRef shape = node.inputs[static_cast<std::size_t>(k)];
                const auto values = constantInts(m_in, shape);
                if (values && !values->empty() && values->front() == region.batch)
                    copy.inputs[static_cast<std::size_t>(k)] = shapeConstant(
                        shape, shard.rows(), m_in.node(shape.node).name + suffix, r, s);
            }
            if (const char* attribute = shapeAttribute(node)) {
                auto values = node.attrs.getInts(attribute, {});
                if (values && !values->empty() && values->front() == region.batch) {
                    values->front() = shard.rows();
                    copy.attrs.set(attribute, *values);
                }
            }
            const std::size_t outputs = copy.outputs.size();
            const ValueRef made = add(std::move(copy), NodeId(i), r, static_cast<std::int32_t>(s));
            shards[s].resize(outputs);
            for (std::uint32_t k = 0; k < outputs; ++k)
                shards[s][k] = ValueRef{made.node, k};
        }
    }

    const Graph& m_in;
    const Plan& m_plan;
    std::vector<std::int32_t> m_regionOf;
    std::vector<std::uint8_t> m_bypassed;
    ShardedGraph m_out;
    std::vector<std::vector<ValueRef>> m_mapped;
    /// Per split node: per shard, its outputs.
    std::unordered_map<std::uint32_t, std::vector<std::vector<ValueRef>>> m_shardValues;
    std::map<std::pair<std::uint32_t, std::uint32_t>, ValueRef> m_concats;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int32_t>, std::vector<ValueRef>>
        m_splits;
};

} // namespace

ShardedGraph shardGraph(const Graph& graph, const Plan& plan) {
    return Sharder(graph, plan).run();
}

} // namespace placer
