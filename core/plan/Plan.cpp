// Plan helpers: totals and the sentence that explains a node's device.
#include "plan/Plan.h"

#include <cmath>
#include <cstdio>

namespace placer {

std::string_view planModeName(PlanMode mode) {
    switch (mode) {
    case PlanMode::Demand:
        return "demand";
    case PlanMode::Unify:
        return "unify";
    case PlanMode::Auto:
        return "auto";
    }
    return "demand";
}

std::string formatMillis(double micros) {
    char text[32];
    // Three significant digits, but whole milliseconds past a second (not "1.65e+03 ms").
    const double millis = micros / 1000.0;
    std::snprintf(text, sizeof text, std::fabs(millis) >= 1000 ? "%.0f ms" : "%.3g ms", millis);
    return text;
}

std::string formatItemsPerSecond(double items, double micros) {
    char text[48];
    const double rate = micros > 0 ? items / (micros / 1e6) : 0.0;
    std::snprintf(text, sizeof text, rate >= 1000 ? "%.0f items/s" : "%.4g items/s", rate);
    return text;
}

std::optional<PlanMode> parsePlanMode(std::string_view name) {
    for (PlanMode mode : {PlanMode::Demand, PlanMode::Unify, PlanMode::Auto}) {
        if (planModeName(mode) == name)
            return mode;
    }
    return std::nullopt;
}

std::string_view conflictKindName(ConflictKind kind) {
    switch (kind) {
    case ConflictKind::NoKernel:
        return "no-kernel";
    case ConflictKind::DType:
        return "dtype";
    case ConflictKind::HostOnly:
        return "host-only";
    case ConflictKind::PinsDisagree:
        return "pins-disagree";
    case ConflictKind::CopySource:
        return "copy-source";
    case ConflictKind::MemoryCapacity:
        return "memory-capacity";
    case ConflictKind::UnknownDevice:
        return "unknown-device";
    case ConflictKind::Unsupported:
        return "unsupported-op";
    case ConflictKind::Split:
        return "split";
    case ConflictKind::OutOfService:
        return "out-of-service";
    }
    return "?";
}

std::int64_t Plan::copiedBytes() const {
    std::int64_t total = 0;
    for (const CopyPlan& copy : copies)
        total += copy.bytes;
    return total;
}

const SplitRegion* Plan::splitOf(NodeId node) const {
    if (node.index >= reasons.size())
        return nullptr;
    const Reason& reason = reasons[node.index];
    if (reason.kind != ReasonKind::Split || reason.region < 0 ||
        static_cast<std::size_t>(reason.region) >= splits.size())
        return nullptr;
    return &splits[static_cast<std::size_t>(reason.region)];
}

std::vector<NodeId> Plan::reasonChain(NodeId node) const {
    std::vector<NodeId> chain;
    NodeId current = node;
    // A deciding consumer comes later in topological order, and a class's fixing node is fixed
    // itself, so the walk ends; the bound guards against a malformed plan.
    while (chain.size() < reasons.size()) {
        const Reason& reason = reasons[current.index];
        const bool followsAnother = reason.kind == ReasonKind::Consumers ||
                                    reason.kind == ReasonKind::ConsumersTie ||
                                    reason.kind == ReasonKind::Class;
        if (!followsAnother || !reason.via.valid() || reason.via == current)
            break;
        chain.push_back(reason.via);
        current = reason.via;
    }
    return chain;
}

std::vector<NodeId> Plan::reasonRoots() const {
    const std::size_t n = reasons.size();
    std::vector<NodeId> root(n);
    std::vector<char> known(n, 0);
    std::vector<std::uint32_t> path;
    for (std::size_t start = 0; start < n; ++start) {
        // Walk to a node whose root is known or that decided by itself, then fill in the path.
        std::uint32_t current = static_cast<std::uint32_t>(start);
        NodeId found;
        path.clear();
        while (!known[current] && path.size() <= n) {
            const Reason& reason = reasons[current];
            const bool followsAnother = reason.kind == ReasonKind::Consumers ||
                                        reason.kind == ReasonKind::ConsumersTie ||
                                        reason.kind == ReasonKind::Class;
            if (!followsAnother || !reason.via.valid() || reason.via.index == current) {
                found = path.empty() ? NodeId() : NodeId(current);
                break;
            }
            path.push_back(current);
            current = reason.via.index;
        }
        if (known[current] && !path.empty())
            found = root[current].valid() ? root[current] : NodeId(current);
        for (std::size_t k = 0; k < path.size(); ++k) {
            root[path[k]] = found;
            known[path[k]] = 1;
        }
        if (path.empty())
            known[start] = 1; // decided by itself: no root
    }
    return root;
}

std::string Plan::explain(const Graph& graph, const DeviceSet& set, const PlanOptions& options,
                          NodeId id) const {
    const Node& node = graph.node(id);
    const Reason& reason = reasons[id.index];
    const DeviceId device = devices[id.index];
    if (!device.valid())
        return "not planned";
    const std::string& here = set[device].name;
    auto nameOf = [&](NodeId n) { return n.valid() ? graph.node(n).name : std::string("?"); };
    switch (reason.kind) {
    case ReasonKind::Pin:
        return "pinned to " + here + " by " + node.pin.origin;
    case ReasonKind::FixedPin:
        return "fixed to " + here + " by " + node.pin.origin;
    case ReasonKind::RejectedPin:
        if (const std::string* why = options.outOfServiceWhy(set[reason.wanted].name))
            return "pinned to " + set[reason.wanted].name + " by " + node.pin.origin +
                   ", which is out of service (" + *why + "): fell back to " + here;
        return "pinned to " + set[reason.wanted].name + " by " + node.pin.origin +
               ", which cannot run " + node.op->name + ": fell back to " + here;
    case ReasonKind::CopyDestination:
        return "device_copy to " + here;
    case ReasonKind::Rule: {
        const OpRule& rule = options.rules[reason.rule];
        return "rule '" + rule.opPattern + "=" + rule.device + "'";
    }
    case ReasonKind::RuleFallback:
        return "no rule covers " + node.op->name + ": fallback device " + here;
    case ReasonKind::KernelFallback:
        if (const std::string* why = options.outOfServiceWhy(set[reason.wanted].name))
            return set[reason.wanted].name + " is out of service (" + *why + "): fell back to " +
                   here;
        return set[reason.wanted].name + " has no kernel for " + node.op->name +
               (node.op->hostOnly ? " (host-only)" : "") + ": fell back to " + here;
    case ReasonKind::HostOnly:
        return "host-only op: runs on the host " + here;
    case ReasonKind::Class: {
        const std::string fixer =
            reason.fromResult ? "the result of " + nameOf(reason.via) + ", required on " + here
                              : nameOf(reason.via) + ", which fixes " + here;
        if (reason.via == id)
            return reason.fromResult ? "the result is required on " + here : "fixed to " + here;
        return "joined by hard edges (a class of " + std::to_string(reason.classSize) +
               " nodes) to " + fixer;
    }
    case ReasonKind::ClassDefault:
        return "its class of " + std::to_string(reason.classSize) +
               " nodes has no fixed device: default device " + here;
    case ReasonKind::Consumers:
        if (reason.via == id)
            return "the result is required on " + here;
        if (reason.voters == 1)
            return "its consumer " + nameOf(reason.via) + " runs on " + here;
        return std::to_string(reason.votes) + " of its " + std::to_string(reason.voters) +
               " consumers run on " + here + " (first: " + nameOf(reason.via) + ")";
    case ReasonKind::ConsumersTie:
        return "its consumers are split evenly (" + std::to_string(reason.votes) + " of " +
               std::to_string(reason.voters) + " on " + here + "): the tie goes to " +
               (device == set.defaultDevice() ? "the default device " + here
                                              : "the lowest-numbered device " + here);
    case ReasonKind::NoConsumers:
        return "nothing consumes it: default device " + here;
    case ReasonKind::Split: {
        const SplitRegion* split = splitOf(id);
        if (!split)
            return "split";
        const SplitRegion& region = *split;
        const std::string pattern = region.pattern.empty() ? std::string("?") : region.pattern;
        if (region.tensor) {
            // Its sharding and the rule that chose it, on which devices.
            std::string text = "sharded across ";
            for (std::size_t s = 0; s < region.shards.size(); ++s)
                text += (s ? "," : "") + set[region.shards[s].device].name;
            for (std::size_t k = 0; k < region.nodes.size() && k < region.ops.size(); ++k) {
                if (region.nodes[k] != id)
                    continue;
                std::string held;
                for (const Sharding& sharding : region.ops[k].outputs)
                    held += (held.empty() ? "" : ",") + sharding.text();
                text += " as " + held + ": " + region.ops[k].why;
            }
            return text + " (--shard '" + pattern + "', " + region.name + ")";
        }
        std::string text = "split across ";
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            const Shard& shard = region.shards[s];
            text += std::string(s == 0                          ? ""
                                : s + 1 == region.shards.size() ? " and "
                                                                : ", ") +
                    set[shard.device].name + " (rows " + std::to_string(shard.begin) + "-" +
                    std::to_string(shard.end - 1) + ")";
        }
        return text + " by --split '" + pattern + "' (" + region.name + ")";
    }
    case ReasonKind::Offloaded:
        return "kept on " + here + " and copied to " + set[reason.wanted].name +
               " on every run: " + set[reason.wanted].name + "'s memory cannot also keep it";
    case ReasonKind::Auto: {
        if (!prediction || id.index >= prediction->micros.size())
            return "auto: " + here;
        const Prediction& p = *prediction;
        const bool fused = id.index < p.fusedInto.size() && p.fusedInto[id.index].valid();
        std::string text =
            fused ? "auto: on " + here + ", in " + nameOf(p.fusedInto[id.index]) + "'s fused kernel"
                  : "auto: " + formatMillis(p.micros[id.index]) + " on " + here;
        if (p.copyInMicros[id.index] > 0)
            text += " + " + formatMillis(p.copyInMicros[id.index]) + " copy in";
        if (p.alternative[id.index].valid())
            text += ", vs " + formatMillis(p.alternativeMicros[id.index]) + " on " +
                    set[p.alternative[id.index]].name;
        else
            text += " (no other device can run it)";
        return text;
    }
    }
    return "?";
}

} // namespace placer
