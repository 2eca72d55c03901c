// Homogeneous splitting: which nodes a request splits and whether each op allows it (the
// sharded graph that runs it: plan/Sharder.cpp).
#include "plan/Split.h"

#include "ir/Axis.h"
#include "ir/BatchRule.h"
#include "ir/OpSemantics.h"
#include "ir/Scalar.h"
#include "plan/Glob.h"
#include "plan/TensorShard.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <unordered_map>

namespace placer {

using namespace batch;

namespace {

/// How many illegal ops one request lists one by one before it sums up the rest.
constexpr std::size_t kListedIllegalOps = 12;

/// Why a stream cannot stack its batches on axis 0 through `region` (its nodes `member`, the
/// copies between them `bypassed`): an op that reads the batch and cannot be in the region
/// (`illegal`), the batch entering from anything but a model input, a value of the region that
/// an op outside it reads, an op outside it that reads a model input's batch, or an output
/// that folds the batch into another axis. std::nullopt when it can.
std::optional<std::string>
streamBlocked(const Graph& graph, const SplitRegion& region,
              const std::vector<std::uint8_t>& member, const std::vector<std::uint8_t>& bypassed,
              const std::vector<std::pair<std::uint32_t, std::string>>& illegal) {
    if (!illegal.empty()) {
        const Node& node = graph.nodes()[illegal.front().first];
        return "'" + node.name + "' (" + node.op->name + ") cannot be split on the batch: it " +
               illegal.front().second;
    }
    // The model inputs the batch enters from, and the copies that carry them to the region.
    std::vector<std::uint8_t> stacked(graph.size(), 0);
    for (ValueRef input : region.inputs) {
        for (ValueRef v = input;; v = graph.node(v.node).inputs.front()) {
            const Node& node = graph.node(v.node);
            if (node.isParameter()) {
                stacked[v.node.index] = 1;
                break;
            }
            if (!node.isDeviceCopy() || node.inputs.empty())
                return "the batch enters its ops from '" + node.name +
                       "', which is not one of the model's inputs";
            stacked[v.node.index] = 1;
        }
    }
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (member[i] || bypassed[i])
            continue;
        for (ValueRef input : node.inputs) {
            if (member[input.node.index])
                return "'" + node.name + "' (" + node.op->name + ") reads '" +
                       graph.valueName(input) + "' on the whole batch";
            if (stacked[input.node.index] && !(node.isDeviceCopy() && stacked[i]))
                return "'" + node.name + "' (" + node.op->name + ") reads the input '" +
                       graph.valueName(input) + "' on the whole batch";
        }
    }
    for (ValueRef output : region.outputs) {
        const auto k = static_cast<std::size_t>(
            std::find(region.nodes.begin(), region.nodes.end(), output.node) -
            region.nodes.begin());
        const BatchAxis axis = k < region.axes.size() && output.output < region.axes[k].size()
                                   ? region.axes[k][output.output]
                                   : BatchAxis{};
        if (axis.batched() && (axis.outer != 1 || axis.inner != 1))
            return "the output '" + graph.valueName(output) + "' folds the batch into its axis " +
                   std::to_string(axis.axis) + " with other rows";
    }
    return std::nullopt;
}

std::string trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return std::string(text);
}

} // namespace

Result<SplitRequest> parseSplitRequest(std::string_view text, std::string_view option) {
    const std::string spelled = std::string(option) + " '" + std::string(text) + "'";
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
        const bool microBatches = request.microBatches;
        region.request = microBatches ? -1 : static_cast<std::int32_t>(r);
        region.microBatched = microBatches;
        region.tensor = request.tensor;
        if (!microBatches) {
            region.requested = formatSplitRequest(request);
            region.pattern = request.nodePattern;
        }
        region.name = microBatches     ? "mb"
                      : request.tensor ? "shard" + std::to_string(r + 1)
                                       : "split" + std::to_string(r + 1);
        const std::int32_t batches = microBatches ? std::max(request.batches, 1) : 1;
        std::string spelled =
            microBatches
                ? "--micro-batches " + std::to_string(request.shards.size())
                : (request.tensor ? "--shard '" : "--split '") + formatSplitRequest(request) + "'";
        if (batches > 1)
            spelled = "--stream " + std::to_string(batches) +
                      (request.shards.size() > 1 ? " " + spelled : std::string());
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
            if (microBatches) {
                // Each micro-batch runs every node where the plan put it.
                region.shards.push_back(Shard{DeviceId(), 1, 0, 0});
                shares.push_back(1);
                continue;
            }
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
        if (!devicesKnown || region.shards.size() * static_cast<std::size_t>(batches) < 2) {
            if (devicesKnown && !microBatches)
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
            } else if (microBatches) {
                candidates.push_back(i); // it stays on its device, whatever pins it there
            } else if (node.pin.active() && !isRegionDevice(node.pin.device)) {
                pinnedAway.push_back(NodeId(i));
            } else if (nodeHostOnly(node)) {
                // A host op (a Shape) has nothing to cut: a sharding leaves it where it is.
                if (!request.tensor)
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
            conflict(
                overlapping,
                spelled + " names " + names(overlapping) + ", already split by '" +
                    (requests[static_cast<std::size_t>(other)].tensor ? "--shard " : "--split ") +
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
        if (request.tensor) {
            // Cut inside its ops: each node that has no kernel on a device runs unsharded.
            for (const auto& [i, why] : illegal)
                conflict({NodeId(i)},
                         "'" + graph.nodes()[i].name + "' (" + graph.nodes()[i].op->name +
                             ") cannot be sharded: it " + why,
                         "it runs unsharded");
            shardTensors(graph, candidates, region);
            for (NodeId id : region.nodes)
                analysis.regionOf[id.index] = static_cast<std::int32_t>(r);
            analysis.regions.push_back(std::move(region));
            continue;
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
                     microBatches ? "use at most " + std::to_string(region.batch) +
                                        " micro-batches, or run a larger batch"
                                  : "split across at most " + std::to_string(region.batch) +
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
        std::unordered_map<std::uint32_t, std::vector<BatchAxis>> batchedOutputs;
        std::map<std::pair<std::uint32_t, std::uint32_t>, BatchAxis> outside;
        auto batchAxis = [&](ValueRef read, bool asData) {
            const ValueRef value = throughCopies(graph, read);
            if (member[value.node.index])
                return batchedOutputs[value.node.index][value.output];
            const auto key = std::pair(value.node.index, value.output);
            if (const auto found = outside.find(key); found != outside.end())
                return found->second;
            const TensorType& type = graph.type(value);
            const bool batched = asData && !isConstantValue(graph, value) && type.rank() > 0 &&
                                 type.shape[0] == region.batch;
            const BatchAxis axis = batched ? BatchAxis{0, 1, 1} : BatchAxis{};
            outside.emplace(key, axis);
            return axis;
        };
        // Values from before the region first: any reader that takes one as data decides.
        for (std::uint32_t i : splittable ? candidates : std::vector<std::uint32_t>{}) {
            const Node& node = graph.nodes()[i];
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                const ValueRef input = node.inputs[k];
                if (!candidate[throughCopies(graph, input).node.index] &&
                    readsAsData(graph, node, k))
                    batchAxis(input, true);
            }
        }
        std::size_t legal = 0;
        for (std::uint32_t i : splittable ? candidates : std::vector<std::uint32_t>{}) {
            const Node& node = graph.nodes()[i];
            std::vector<BatchAxis> axes(node.ownInputs());
            bool any = false;
            for (std::size_t k = 0; k < node.inputs.size(); ++k) {
                const BatchAxis axis = batchAxis(node.inputs[k], readsAsData(graph, node, k));
                if (k < axes.size())
                    axes[k] = axis;
                any = any || axis.batched();
            }
            if (!any)
                continue; // computes nothing from the batch: it runs once, unsplit
            BatchVerdict verdict = batchRule(graph, node, axes, region.batch);
            if (verdict.why) {
                illegal.emplace_back(i, *verdict.why);
                continue;
            }
            member[i] = 1;
            ++legal;
            verdict.outputs.resize(node.outputs.size());
            region.axes.push_back(verdict.outputs);
            batchedOutputs.emplace(i, std::move(verdict.outputs));
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
                (batchAxis(input, false).batched() ? region.inputs : region.shared)
                    .push_back(input);
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
        // A stream stacks its batches on axis 0 of every input and output: what runs must keep
        // them apart, or the batches are run one at a time.
        if (batches > 1) {
            if (const std::optional<std::string> why =
                    streamBlocked(graph, region, member, bypassed, illegal)) {
                conflict({},
                         spelled + ": " + *why +
                             ", so the batches cannot be stacked; nothing is streamed",
                         "stream a model whose ops all keep the rows of the batch apart, or run "
                         "its batches one at a time");
            } else {
                region.batches = batches;
                const std::size_t perBatch = region.shards.size();
                for (std::int32_t b = 1; b < batches; ++b) {
                    for (std::size_t k = 0; k < perBatch; ++k) {
                        Shard shard = region.shards[k];
                        shard.begin += b * region.batch;
                        shard.end += b * region.batch;
                        region.shards.push_back(shard);
                    }
                }
            }
            if (region.shards.size() < 2) { // one micro-batch a batch, and no stream
                for (NodeId id : region.nodes)
                    member[id.index] = 0;
                SplitRegion none;
                none.request = region.request;
                none.microBatched = true;
                none.name = region.name;
                analysis.regions.push_back(std::move(none));
                continue;
            }
        }
        for (NodeId id : region.nodes) {
            analysis.regionOf[id.index] = static_cast<std::int32_t>(r);
            member[id.index] = 0;
        }
        analysis.regions.push_back(std::move(region));
    }
    return analysis;
}

const SplitRegion* streamRegion(const Plan& plan) {
    for (const SplitRegion& region : plan.splits) {
        if (region.batches > 1 && !region.shards.empty())
            return &region;
    }
    return nullptr;
}

} // namespace placer
