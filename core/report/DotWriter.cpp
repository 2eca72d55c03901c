// DOT writer.
#include "report/DotWriter.h"

#include <algorithm>
#include <array>
#include <unordered_set>

namespace placer {

namespace {

std::string quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

} // namespace

std::string deviceColor(DeviceId device) {
    // A qualitative palette (Tableau 10), light enough for black text.
    static constexpr std::array<const char*, 8> kPalette{
        "#9ec5e8", "#a8d88f", "#f7c08a", "#d9b3e0", "#f4a6a6", "#b8e0d9", "#f2dc8f", "#d6c4b0"};
    if (!device.valid())
        return "#eeeeee";
    return kPalette[static_cast<std::size_t>(device.index) % kPalette.size()];
}

std::vector<std::string> conflictedNodeNames(const Graph& graph, const Plan& plan) {
    std::vector<std::string> names;
    for (const Conflict& conflict : plan.conflicts) {
        for (NodeId id : conflict.nodes)
            names.push_back(graph.node(id).name);
    }
    return names;
}

std::string writeDot(const Graph& graph, const DeviceSet& devices,
                     const std::vector<std::string>& conflictedNames) {
    const std::unordered_set<std::string> conflicted(conflictedNames.begin(),
                                                     conflictedNames.end());
    std::string out = "digraph " + quote(graph.name.empty() ? "graph" : graph.name) + " {\n";
    out += "  rankdir=TB;\n";
    out += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
    out += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
    out += "  subgraph cluster_devices {\n    label=\"devices\"; fontname=\"Helvetica\"; "
           "style=dashed;\n";
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        out += "    device_" + std::to_string(d) + " [label=" +
               quote(device.name + " (" + std::string(deviceKindName(device.kind)) + ")") +
               ", fillcolor=" + quote(deviceColor(DeviceId(d))) + "];\n";
    }
    out += "  }\n";
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        std::string label =
            node.name == node.op->name ? node.name : node.name + "\n" + node.op->name;
        if (node.outputs.size() == 1)
            label += "\n" + node.outputs[0].toShortString();
        std::string attrs =
            "label=" + quote(label) + ", fillcolor=" + quote(deviceColor(node.device));
        if (node.isDeviceCopy()) {
            label = node.name + "\n" + devices[node.copySource].name + " -> " +
                    devices[node.copyDestination].name + "\n" +
                    formatBytes(node.outputs[0].bytes());
            attrs = "shape=cds, label=" + quote(label) +
                    ", fillcolor=" + quote(deviceColor(node.copyDestination));
        }
        if (node.pin.active())
            attrs += ", penwidth=2.5";
        if (conflicted.count(node.name))
            attrs += ", color=red, penwidth=3";
        out += "  n" + std::to_string(i) + " [" + attrs + "];\n";
    }
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        for (const ValueRef& input : graph.nodes()[i].inputs) {
            const TensorType& type = graph.type(input);
            const double width = 1.0 + std::min(3.0, static_cast<double>(type.bytes()) / 1048576.0);
            out += "  n" + std::to_string(input.node.index) + " -> n" + std::to_string(i) +
                   " [penwidth=" + std::to_string(width).substr(0, 4) +
                   ", tooltip=" + quote(type.toShortString()) + "];\n";
        }
    }
    out += "}\n";
    return out;
}

} // namespace placer
