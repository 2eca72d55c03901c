// The sharded graph a split plan runs (plan/Split.h's shardGraph): each split node once per
// shard on its device, the values entering a region split where they enter and joined where
// they leave; a micro-batched plan's nodes once per micro-batch; and a tensor-sharded region's
// nodes once per device on their slices of the weights, with the collectives its shardings need
// (plan/TensorShard.h) as nodes on every device of the region.
#include "plan/Split.h"

#include "ir/Axis.h"
#include "ir/BatchRule.h"
#include "ir/OpSemantics.h"
#include "ir/Scalar.h"
#include "plan/TensorShard.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <unordered_map>

namespace placer {

using namespace batch;

namespace {

class Sharder {
public:
    Sharder(const Graph& graph, const Plan& plan) : m_in(graph), m_plan(plan) {
        m_regionOf.assign(graph.size(), -1);
        m_bypassed.assign(graph.size(), 0);
        m_stacked.assign(graph.size(), 1);
        for (std::size_t r = 0; r < plan.splits.size(); ++r) {
            const SplitRegion& region = plan.splits[r];
            if (region.tensor) {
                noteTensorRegion(static_cast<std::int32_t>(r));
                continue;
            }
            for (std::size_t k = 0; k < region.nodes.size(); ++k) {
                m_regionOf[region.nodes[k].index] = static_cast<std::int32_t>(r);
                m_axes.emplace(region.nodes[k].index, &region.axes[k]);
            }
            for (NodeId id : plan.splits[r].bypassed)
                m_bypassed[id.index] = 1;
            // A stream's inputs, and the copies that carry them to the region, hold every batch.
            for (ValueRef input : region.batches > 1 ? region.inputs : std::vector<ValueRef>{}) {
                for (ValueRef v = input;; v = graph.node(v.node).inputs.front()) {
                    m_stacked[v.node.index] = region.batches;
                    if (!graph.node(v.node).isDeviceCopy() || graph.node(v.node).inputs.empty())
                        break;
                }
            }
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
        const bool pipelined =
            std::any_of(m_plan.splits.begin(), m_plan.splits.end(),
                        [](const SplitRegion& region) { return region.microBatched; });
        if (pipelined)
            inMicroBatchOrder();
        return std::move(m_out);
    }

private:
    /// Puts the graph in micro-batch order: the first micro-batch's nodes, then the second's,
    /// each node as early as its inputs allow (a node of no micro-batch takes the latest of its
    /// inputs'). The memory plan follows this order, so storages are reused the way the devices
    /// work through the micro-batches, and never make one micro-batch wait for a later one.
    void inMicroBatchOrder() {
        const Graph& graph = m_out.graph;
        const std::size_t n = graph.size();
        std::vector<std::int32_t> key(n, 0);
        std::vector<std::uint32_t> waiting(n, 0);
        std::vector<std::vector<std::uint32_t>> consumers(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = graph.nodes()[i];
            std::int32_t k = node.microBatch;
            for (ValueRef input : node.inputs) {
                if (node.microBatch < 0)
                    k = std::max(k, key[input.node.index]);
                consumers[input.node.index].push_back(i);
                ++waiting[i];
            }
            key[i] = std::max(k, 0);
        }
        using Entry = std::pair<std::int32_t, std::uint32_t>; // (micro-batch, old index)
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (waiting[i] == 0)
                ready.emplace(key[i], i);
        }
        ShardedGraph out;
        out.graph.name = graph.name;
        out.graph.sourceFormat = graph.sourceFormat;
        out.graph.properties = graph.properties;
        std::vector<NodeId> moved(n);
        while (!ready.empty()) {
            const std::uint32_t i = ready.top().second;
            ready.pop();
            Node node = graph.nodes()[i];
            for (ValueRef& input : node.inputs)
                input.node = moved[input.node.index];
            moved[i] = out.graph.addNode(std::move(node));
            out.origin.push_back(m_out.origin[i]);
            out.region.push_back(m_out.region[i]);
            out.shard.push_back(m_out.shard[i]);
            for (std::uint32_t c : consumers[i]) {
                if (--waiting[c] == 0)
                    ready.emplace(key[c], c);
            }
        }
        for (GraphOutput output : graph.outputs()) {
            output.value.node = moved[output.value.node.index];
            out.graph.addOutput(output);
        }
        m_out = std::move(out);
    }

    const SplitRegion& regionOf(std::uint32_t node) const {
        return m_plan.splits[static_cast<std::size_t>(m_regionOf[node])];
    }

    /// A tensor-sharded region's nodes and their rules; the constants its shards read only in
    /// slices are not copied whole.
    void noteTensorRegion(std::int32_t r) {
        const SplitRegion& region = m_plan.splits[static_cast<std::size_t>(r)];
        std::unordered_map<std::uint32_t, std::size_t> sliced;
        for (std::size_t k = 0; k < region.nodes.size(); ++k) {
            const NodeId id = region.nodes[k];
            m_regionOf[id.index] = r;
            m_tensorOps.emplace(id.index, &region.ops[k]);
            const Node& node = m_in.node(id);
            for (std::size_t j = 0; j < node.inputs.size(); ++j) {
                const ValueRef source = throughCopies(m_in, node.inputs[j]);
                if (region.ops[k].inputs[j].kind == ShardRead::Kind::Slice &&
                    m_in.node(source.node).isConstant() && source.node == node.inputs[j].node)
                    ++sliced[source.node.index];
            }
        }
        if (sliced.empty())
            return;
        std::vector<std::size_t> uses(m_in.size(), 0);
        for (const Node& node : m_in.nodes()) {
            for (ValueRef input : node.inputs)
                ++uses[input.node.index];
        }
        for (const GraphOutput& output : m_in.outputs())
            ++uses[output.value.node.index];
        for (const auto& [node, count] : sliced) {
            if (uses[node] == count)
                m_bypassed[node] = 1; // each shard reads its slice, and nothing the whole
        }
    }

    bool isTensor(std::uint32_t node) const {
        return m_regionOf[node] >= 0 && regionOf(node).tensor;
    }

    /// The whole of a tensor-sharded region's value, where it leaves the region: a copy's,
    /// the shards' cuts joined, or their partial sums added.
    ValueRef tensorWhole(ValueRef value) {
        const TensorShardOp& op = *m_tensorOps.at(value.node.index);
        const Sharding& held = op.outputs[value.output];
        const auto& shards = m_shardValues.at(value.node.index);
        if (held.kind == Sharding::Kind::Replicate)
            return shards[0][value.output];
        const auto key = std::pair(value.node.index, value.output);
        if (const auto found = m_concats.find(key); found != m_concats.end())
            return found->second;
        // Made whole on the first device already: read that.
        if (const auto found = m_gathered.find(std::tuple(value.node.index, value.output, 0));
            found != m_gathered.end())
            return found->second;
        const std::int32_t r = m_regionOf[value.node.index];
        const ValueRef made =
            combined(value, held,
                     m_in.valueName(value) + "/" + regionOf(value.node.index).name +
                         (held.sharded() ? ".gather" : ".reduce"),
                     r, -1);
        m_concats.emplace(key, made);
        return made;
    }

    /// The shards' parts of `value` joined (a cut) or added (partial sums), in shard order.
    ValueRef combined(ValueRef value, const Sharding& held, const std::string& name, std::int32_t r,
                      std::int32_t shard) {
        const auto& shards = m_shardValues.at(value.node.index);
        Node node;
        node.name = freshName(name);
        node.outputs = {m_in.type(value)};
        if (held.sharded()) {
            node.op = OpRegistry::global().find("Concat");
            node.attrs.set("axis", std::int64_t{held.axis});
        } else {
            node.op = OpRegistry::global().find("Sum");
        }
        const SplitRegion& region = m_plan.splits[static_cast<std::size_t>(r)];
        if (held.sharded() && held.blocks > 1) {
            // Cut in blocks: each shard's part of block b, block by block.
            for (std::int32_t b = 0; b < held.blocks; ++b) {
                for (std::size_t s = 0; s < shards.size(); ++s) {
                    const std::int64_t width = held.bounds[s + 1] - held.bounds[s];
                    node.inputs.push_back(sliceOf(
                        shards[s][value.output], held.axis, b * width, (b + 1) * width,
                        name + ".block" + std::to_string(b) + "." + std::to_string(s), r, s));
                }
            }
        } else {
            for (const auto& part : shards)
                node.inputs.push_back(part[value.output]);
        }
        if (shard >= 0)
            node.pin = holdAt(region.shards[static_cast<std::size_t>(shard)].device,
                              "--shard " + region.name);
        return add(std::move(node), NodeId(), r, shard);
    }

    /// `value`'s elements [lo, hi) on `axis`, by a Slice on shard `s`'s device of region `r`.
    ValueRef sliceOf(ValueRef value, std::int32_t axis, std::int64_t lo, std::int64_t hi,
                     const std::string& name, std::int32_t r, std::size_t s) {
        const SplitRegion& region = m_plan.splits[static_cast<std::size_t>(r)];
        Node slice;
        slice.op = OpRegistry::global().find("Slice");
        slice.name = freshName(name);
        slice.inputs = {value, intConstant(name + ".starts", {lo}, r),
                        intConstant(name + ".ends", {hi}, r),
                        intConstant(name + ".axes", {axis}, r)};
        TensorType type = m_out.graph.type(value);
        type.shape[static_cast<std::size_t>(axis)] = hi - lo;
        slice.outputs = {type};
        slice.pin = holdAt(region.shards[s].device, "--shard " + region.name);
        return add(std::move(slice), NodeId(), r, static_cast<std::int32_t>(s));
    }

    /// `value` of a tensor-sharded region made whole on shard `s`'s device: one part of the
    /// AllGather or AllReduce every device of the region runs.
    ValueRef gatheredOn(ValueRef value, std::size_t s) {
        const auto key = std::tuple(value.node.index, value.output, static_cast<std::int32_t>(s));
        if (const auto found = m_gathered.find(key); found != m_gathered.end())
            return found->second;
        const Sharding& held = m_tensorOps.at(value.node.index)->outputs[value.output];
        const std::int32_t r = m_regionOf[value.node.index];
        const ValueRef made =
            combined(value, held,
                     m_in.valueName(value) + "/" + regionOf(value.node.index).name +
                         (held.sharded() ? ".allgather." : ".allreduce.") + std::to_string(s),
                     r, static_cast<std::int32_t>(s));
        m_gathered.emplace(key, made);
        return made;
    }

    /// A constant's slice [lo, hi) on `axis`, for one shard: only that shard's device holds it.
    ValueRef slicedConstant(ValueRef value, std::int32_t axis, std::int64_t lo, std::int64_t hi,
                            std::int32_t blocks, std::int32_t r, std::size_t s) {
        const auto key = std::tuple(value.node.index, axis, blocks, lo, hi);
        if (const auto found = m_slices.find(key); found != m_slices.end())
            return found->second;
        const Node& original = m_in.node(value.node);
        Node constant = original;
        constant.name =
            freshName(original.name + "/" + m_plan.splits[static_cast<std::size_t>(r)].name + "." +
                      std::to_string(s));
        constant.aliases.clear();
        constant.pin = Pin{};
        constant.rejectedPins.clear();
        const std::vector<std::int64_t>& shape = original.outputs[0].shape;
        const auto at = static_cast<std::size_t>(axis);
        constant.outputs[0].shape[at] = (hi - lo) * blocks;
        if (original.data) {
            const auto element = static_cast<std::size_t>(dtypeSize(original.outputs[0].dtype));
            std::size_t outer = 1, inner = element;
            for (std::size_t k = 0; k < shape.size(); ++k) {
                if (k < at)
                    outer *= static_cast<std::size_t>(shape[k]);
                else if (k > at)
                    inner *= static_cast<std::size_t>(shape[k]);
            }
            // Of each block of the axis, [lo, hi) within it.
            const auto extent = static_cast<std::size_t>(shape[at]);
            const auto block = extent / static_cast<std::size_t>(blocks);
            const auto width = static_cast<std::size_t>(hi - lo) * inner;
            const auto count = static_cast<std::size_t>(blocks);
            std::string bytes(outer * width * count, '\0');
            const char* from = original.data->data();
            for (std::size_t o = 0; o < outer; ++o) {
                for (std::size_t b = 0; b < count; ++b)
                    std::memcpy(bytes.data() + (o * count + b) * width,
                                from +
                                    (o * extent + b * block + static_cast<std::size_t>(lo)) * inner,
                                width);
            }
            constant.data = std::make_shared<const TensorData>(std::move(bytes));
        }
        const ValueRef made = add(std::move(constant), NodeId(), r, static_cast<std::int32_t>(s));
        m_slices.emplace(key, made);
        return made;
    }

    /// What shard `s` of tensor-sharded region `r` reads for `value` as `read` says.
    ValueRef tensorRead(ValueRef value, const ShardRead& read, std::int32_t r, std::size_t s) {
        const ValueRef source = throughCopies(m_in, value);
        const bool inside = m_regionOf[source.node.index] == r;
        const SplitRegion& region = m_plan.splits[static_cast<std::size_t>(r)];
        auto local = [&]() {
            if (!inside)
                return whole(value);
            const Sharding& held = m_tensorOps.at(source.node.index)->outputs[source.output];
            return held.kind == Sharding::Kind::Replicate
                       ? m_shardValues.at(source.node.index)[s][source.output]
                       : gatheredOn(source, s);
        };
        switch (read.kind) {
        case ShardRead::Kind::Own:
            return inside ? m_shardValues.at(source.node.index)[s][source.output] : whole(value);
        case ShardRead::Kind::Whole:
        case ShardRead::Kind::FirstOnly:
            return local();
        case ShardRead::Kind::Slice:
            break;
        }
        const std::int64_t lo = read.bounds[s], hi = read.bounds[s + 1];
        if (!inside && m_in.node(source.node).isConstant() && m_regionOf[source.node.index] < 0)
            return slicedConstant(source, read.axis, lo, hi, read.blocks, r, s);
        // A value every device holds whole, sliced where it is.
        Node slice;
        slice.op = OpRegistry::global().find("Slice");
        const std::string name =
            m_in.valueName(value) + "/" + region.name + ".slice." + std::to_string(s);
        slice.name = freshName(name);
        slice.inputs = {local(), intConstant(name + ".starts", {lo}, r),
                        intConstant(name + ".ends", {hi}, r),
                        intConstant(name + ".axes", {read.axis}, r)};
        TensorType type = m_in.type(value);
        type.shape[static_cast<std::size_t>(read.axis)] = hi - lo;
        slice.outputs = {type};
        slice.pin = holdAt(region.shards[s].device, "--shard " + region.name);
        return add(std::move(slice), NodeId(), r, static_cast<std::int32_t>(s));
    }

    /// A tensor-sharded node once per shard, each reading as its rule says.
    void shardTensorNode(std::uint32_t i) {
        const Node& node = m_in.nodes()[i];
        const std::int32_t r = m_regionOf[i];
        const SplitRegion& region = regionOf(i);
        const TensorShardOp& op = *m_tensorOps.at(i);
        auto& shards = m_shardValues[i];
        shards.resize(region.shards.size());
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            if (op.passThrough >= 0 && s > 0) {
                const auto k = static_cast<std::size_t>(op.passThrough);
                shards[s] = {tensorRead(node.inputs[k], op.inputs[k], r, s)};
                continue;
            }
            const std::string suffix = "/" + region.name + "." + std::to_string(s);
            Node copy = node;
            copy.name = freshName(node.name + suffix);
            copy.aliases.clear();
            copy.rejectedPins.clear();
            copy.pin = holdAt(region.shards[s].device, "--shard " + region.name);
            copy.pin.hold = !node.pin.active();
            copy.inputs.clear();
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                if (op.inputs[k].kind == ShardRead::Kind::FirstOnly && s > 0 &&
                    k + 1 == node.inputs.size())
                    continue; // an optional last input (a bias) the first shard adds
                copy.inputs.push_back(tensorRead(node.inputs[k], op.inputs[k], r, s));
            }
            for (std::size_t k = 0; k < copy.outputs.size() && k < op.outputs.size(); ++k) {
                const Sharding& held = op.outputs[k];
                if (held.sharded())
                    copy.outputs[k].shape[static_cast<std::size_t>(held.axis)] =
                        (held.bounds[s + 1] - held.bounds[s]) * held.blocks;
            }
            // A Slice of one block of a blocked cut: each device's share of that block.
            if (node.op->name == "Slice" && op.inputs[0].kind == ShardRead::Kind::Own &&
                node.inputs.size() >= 3 && !op.outputs.empty() && op.outputs[0].sharded()) {
                const ValueRef source = throughCopies(m_in, node.inputs[0]);
                const auto producer = m_tensorOps.find(source.node.index);
                const auto starts = constantInts(m_in, node.inputs[1]);
                if (producer != m_tensorOps.end() && starts && starts->size() == 1) {
                    const Sharding& held = producer->second->outputs[source.output];
                    if (held.sharded() && held.blocks > 1) {
                        const std::int64_t extent = held.bounds.back() * held.blocks;
                        const std::int64_t start =
                            (*starts)[0] < 0 ? (*starts)[0] + extent : (*starts)[0];
                        const std::int64_t block = start / held.bounds.back();
                        const std::int64_t width = held.bounds[s + 1] - held.bounds[s];
                        copy.inputs[1] =
                            intConstant(node.name + suffix + ".starts", {block * width}, r);
                        copy.inputs[2] =
                            intConstant(node.name + suffix + ".ends", {(block + 1) * width}, r);
                    }
                }
            }
            // A Split of blocks into its parts: each device's parts are its shares.
            if (node.op->name == "Split" && op.inputs[0].kind == ShardRead::Kind::Own &&
                !op.outputs.empty() && op.outputs[0].sharded()) {
                const Sharding& part = op.outputs[0];
                const std::vector<std::int64_t> sizes(node.outputs.size(),
                                                      part.bounds[s + 1] - part.bounds[s]);
                if (node.inputs.size() > 1)
                    copy.inputs[1] = intConstant(node.name + suffix + ".sizes", sizes, r);
                else if (node.attrs.getInts("split", {}).has_value() &&
                         !node.attrs.getInts("split", {}).value().empty())
                    copy.attrs.set("split", sizes);
            }
            // A reshape spelling out the cut axis's extent spells out the shard's.
            if (node.op->name == "Reshape" && node.inputs.size() > 1 && op.outputs[0].sharded()) {
                const ValueRef shape = throughCopies(m_in, node.inputs[1]);
                const auto values = constantInts(m_in, shape);
                const auto at = static_cast<std::size_t>(op.outputs[0].axis);
                if (values && at < values->size() && (*values)[at] != -1)
                    copy.inputs[1] = shapeConstant(shape, at, copy.outputs[0].shape[at],
                                                   m_in.node(shape.node).name + suffix, r, s);
            }
            const std::size_t outputs = copy.outputs.size();
            const ValueRef made = add(std::move(copy), NodeId(i), r, static_cast<std::int32_t>(s));
            shards[s].resize(outputs);
            for (std::uint32_t k = 0; k < outputs; ++k)
                shards[s][k] = ValueRef{made.node, k};
        }
    }

    /// Where a split node's output carries the batch.
    BatchAxis axisOf(ValueRef value) const {
        const auto& axes = *m_axes.at(value.node.index);
        return value.output < axes.size() ? axes[value.output] : BatchAxis{};
    }

    /// An int64 constant (a shape).
    ValueRef intConstant(const std::string& name, const std::vector<std::int64_t>& values,
                         std::int32_t region) {
        Node constant;
        constant.op = &OpRegistry::global().constant();
        constant.name = freshName(name);
        constant.outputs = {TensorType{{static_cast<std::int64_t>(values.size())}, DType::Int64}};
        std::string bytes(values.size() * sizeof(std::int64_t), '\0');
        std::memcpy(bytes.data(), values.data(), bytes.size());
        constant.data = std::make_shared<const TensorData>(std::move(bytes));
        return add(std::move(constant), NodeId(), region, -1);
    }

    /// `value` (of `type`) reshaped to `shape`.
    ValueRef reshaped(ValueRef value, const TensorType& type, std::vector<std::int64_t> shape,
                      const std::string& name, std::int32_t region) {
        Node reshape;
        reshape.op = OpRegistry::global().find("Reshape");
        reshape.name = freshName(name);
        reshape.inputs = {value, intConstant(name + ".shape", shape, region)};
        reshape.outputs = {TensorType{std::move(shape), type.dtype}};
        return add(std::move(reshape), NodeId(), region, -1);
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
        return Pin{PinKind::Plain, device, origin, true};
    }

    /// The whole value in the sharded graph: as it is outside a region; a region's result
    /// concatenated from its shards.
    ValueRef whole(ValueRef value) {
        const std::int32_t r = m_regionOf[value.node.index];
        if (r < 0)
            return m_mapped[value.node.index][value.output];
        if (isTensor(value.node.index))
            return tensorWhole(value);
        const auto& shards = m_shardValues.at(value.node.index);
        const BatchAxis axis = axisOf(value);
        if (!axis.batched())
            return shards[0][value.output];
        const auto key = std::pair(value.node.index, value.output);
        if (const auto found = m_concats.find(key); found != m_concats.end())
            return found->second;
        const SplitRegion& region = regionOf(value.node.index);
        // A stream's output holds every batch: as many rows as its shards together.
        const std::int64_t rows = region.shards.empty() ? region.batch : region.shards.back().end;
        const auto at = static_cast<std::size_t>(axis.axis);
        TensorType type = m_in.type(value);
        type.shape[at] = axis.outer * rows * axis.inner;
        const std::string base = m_in.valueName(value) + "/" + region.name;
        Node concat;
        concat.op = OpRegistry::global().find("Concat");
        concat.name = freshName(base + ".concat");
        concat.outputs = {type};
        if (axis.outer == 1) {
            concat.attrs.set("axis", std::int64_t{axis.axis});
            for (const auto& shard : shards)
                concat.inputs.push_back(shard[value.output]);
            const ValueRef made = add(std::move(concat), NodeId(), r, -1);
            m_concats.emplace(key, made);
            return made;
        }
        // The batch sits inside its axis (outer x batch x inner): each shard's part is split
        // into outer x rows x inner, the parts joined on the rows, and the axis made whole.
        concat.attrs.set("axis", std::int64_t{axis.axis + 1});
        std::vector<std::int64_t> joined = type.shape;
        joined[at] = axis.outer;
        joined.insert(joined.begin() + axis.axis + 1, rows * axis.inner);
        concat.outputs = {TensorType{joined, type.dtype}};
        for (std::size_t s = 0; s < shards.size(); ++s) {
            std::vector<std::int64_t> part = joined;
            part[at + 1] = region.shards[s].rows() * axis.inner;
            TensorType partType = type;
            partType.shape[at] = axis.outer * region.shards[s].rows() * axis.inner;
            concat.inputs.push_back(reshaped(shards[s][value.output], partType, part,
                                             base + "." + std::to_string(s) + ".unfold", r));
        }
        const ValueRef joinedValue = add(std::move(concat), NodeId(), r, -1);
        const ValueRef made = reshaped(joinedValue, type, type.shape, base + ".fold", r);
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
        if (fromRegion && axisOf(value) == BatchAxis{0, 1, 1} &&
            sameShards(regionOf(value.node.index), region))
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
            const DeviceId at = fromRegion && !regionOf(value.node.index).microBatched
                                    ? regionOf(value.node.index).shards[0].device
                                    : m_plan.devices[value.node.index];
            if (at.valid())
                split.pin = holdAt(at, region.microBatched ? std::string("--micro-batches")
                                                           : "--split " + region.name);
            const ValueRef made = add(std::move(split), NodeId(), r, -1);
            std::vector<ValueRef> parts;
            for (std::uint32_t k = 0; k < region.shards.size(); ++k)
                parts.push_back(ValueRef{made.node, k});
            found = m_splits.emplace(key, std::move(parts)).first;
        }
        return found->second[s];
    }

    static bool sameShards(const SplitRegion& a, const SplitRegion& b) {
        if (a.shards.size() != b.shards.size() || a.batch != b.batch || a.batches != b.batches)
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
        if (m_stacked[i] > 1 && !node.outputs.empty() && node.outputs[0].rank() > 0)
            node.outputs[0].shape[0] *= m_stacked[i];
        // Held where the user's plan put it, as the optimiser holds nodes.
        if (node.role() == OpRole::Compute && !node.pin.active() && m_plan.devices[i].valid())
            node.pin = holdAt(m_plan.devices[i], "plan");
        const std::size_t outputs = node.outputs.size();
        const ValueRef made = add(std::move(node), NodeId(i), -1, -1);
        m_mapped[i].resize(outputs);
        for (std::uint32_t k = 0; k < outputs; ++k)
            m_mapped[i][k] = ValueRef{made.node, k};
    }

    /// A constant like `value` (integers) with entry `at` set to `extent`: a shard's own shape.
    ValueRef shapeConstant(ValueRef value, std::size_t at, std::int64_t extent,
                           const std::string& name, std::int32_t r, std::size_t s) {
        const Node& original = m_in.node(value.node);
        Node constant = original;
        constant.name = freshName(name);
        constant.aliases.clear();
        constant.pin = Pin{};
        constant.rejectedPins.clear();
        TensorData data = *original.data;
        const std::string element =
            encodeScalar(original.outputs[0].dtype, static_cast<double>(extent));
        std::memcpy(data.data() + at * element.size(), element.data(), element.size());
        constant.data = std::make_shared<const TensorData>(std::move(data));
        return add(std::move(constant), NodeId(), r, static_cast<std::int32_t>(s));
    }

    void shardNode(std::uint32_t i) {
        if (isTensor(i)) {
            shardTensorNode(i);
            return;
        }
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
            if (region.microBatched) {
                // The node's own device, for every micro-batch.
                copy.microBatch = static_cast<std::int32_t>(s);
                if (m_plan.devices[i].valid())
                    copy.pin = holdAt(m_plan.devices[i], "--micro-batches");
            } else {
                copy.pin = holdAt(shard.device, "--split " + region.name);
            }
            copy.pin.hold = !node.pin.active(); // a user's pin stays one on every shard
            for (ValueRef& input : copy.inputs)
                input = shardInput(input, r, s);
            const std::vector<BatchAxis>& axes = *m_axes.at(i);
            for (std::size_t k = 0; k < copy.outputs.size() && k < axes.size(); ++k) {
                if (axes[k].batched())
                    copy.outputs[k].shape[static_cast<std::size_t>(axes[k].axis)] =
                        axes[k].outer * shard.rows() * axes[k].inner;
            }
            // A shape that spells out the batch's extent reads the shard's instead.
            const BatchAxis out = axes.empty() ? BatchAxis{} : axes.front();
            const std::int64_t whole = out.outer * region.batch * out.inner;
            const std::int64_t part = out.outer * shard.rows() * out.inner;
            const auto at = static_cast<std::size_t>(out.axis);
            if (const int k = shapeInput(node); k >= 0 && out.batched()) {
                const ValueRef shape = node.inputs[static_cast<std::size_t>(k)];
                const auto values = constantInts(m_in, shape);
                if (values && at < values->size() && (*values)[at] == whole)
                    copy.inputs[static_cast<std::size_t>(k)] =
                        shapeConstant(shape, at, part, m_in.node(shape.node).name + suffix, r, s);
            }
            if (const char* attribute = shapeAttribute(node); attribute && out.batched()) {
                auto values = node.attrs.getInts(attribute, {});
                if (values && at < values->size() && (*values)[at] == whole) {
                    (*values)[at] = part;
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
    /// Per node outside the regions: how many batches of a stream its output holds.
    std::vector<std::int32_t> m_stacked;
    std::unordered_map<std::uint32_t, const std::vector<BatchAxis>*> m_axes;
    ShardedGraph m_out;
    std::vector<std::vector<ValueRef>> m_mapped;
    /// Per split node: per shard, its outputs.
    std::unordered_map<std::uint32_t, std::vector<std::vector<ValueRef>>> m_shardValues;
    std::map<std::pair<std::uint32_t, std::uint32_t>, ValueRef> m_concats;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int32_t>, std::vector<ValueRef>>
        m_splits;
    /// Tensor-sharded regions: each node's rule; each value made whole on a shard's device
    /// (value's node, output, shard); each constant's slices (node, axis, blocks, begin, end).
    std::unordered_map<std::uint32_t, const TensorShardOp*> m_tensorOps;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int32_t>, ValueRef> m_gathered;
    std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t, std::int64_t, std::int64_t>,
             ValueRef>
        m_slices;
};

} // namespace

ShardedGraph shardGraph(const Graph& graph, const Plan& plan) {
    return Sharder(graph, plan).run();
}

} // namespace placer
