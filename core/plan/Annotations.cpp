// Command-line placement requests.
#include "plan/Annotations.h"

#include "plan/Glob.h"

namespace placer {

Result<Assignment> splitAssignment(std::string_view text, SplitAt at) {
    const std::size_t eq = at == SplitAt::LastEquals ? text.rfind('=') : text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        return SourceError::sentence("'" + std::string(text) + "' is not of the form NAME=DEVICE");
    return Assignment{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

Status applyPinRequests(Graph& graph, const DeviceSet& devices,
                        const std::vector<PinRequest>& requests) {
    std::vector<std::pair<NodeId, Pin>> pins;
    for (const PinRequest& request : requests) {
        const std::string spelled = "--pin " + request.nodePattern + "=" + request.device;
        const auto device = devices.find(request.device);
        if (!device) {
            return SourceError::sentence(spelled + ": unknown device '" + request.device +
                                         "' (devices: " + devices.namesList() + ")");
        }
        const Pin pin{request.fixed ? PinKind::Fixed : PinKind::Plain, *device, spelled};
        auto pattern = NamePattern::parse(request.nodePattern);
        if (!pattern)
            return SourceError::sentence(spelled + ": " + pattern.error().message);
        std::size_t matched = 0;
        if (!pattern.value().wildcard()) {
            if (const auto id = graph.find(request.nodePattern)) {
                pins.emplace_back(*id, pin);
                ++matched;
            }
        } else {
            for (std::uint32_t i = 0; i < graph.size(); ++i) {
                const Node& node = graph.nodes()[i];
                bool hit = pattern.value().matches(node.name);
                for (const std::string& alias : node.aliases)
                    hit = hit || pattern.value().matches(alias);
                if (hit) {
                    pins.emplace_back(NodeId(i), pin);
                    ++matched;
                }
            }
        }
        if (matched == 0) {
            return SourceError::sentence(spelled + ": no node is called '" + request.nodePattern +
                                         "'");
        }
    }
    for (auto& [id, pin] : pins) {
        graph.setPin(id, std::move(pin));
        graph.setRejectedPins(id, {});
    }
    return {};
}

Status validateRules(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                     std::vector<std::string>* warnings) {
    for (const OpRule& rule : options.rules) {
        if (!devices.find(rule.device)) {
            return SourceError::sentence("rule '" + rule.opPattern + "=" + rule.device +
                                         "' names unknown device '" + rule.device +
                                         "' (devices: " + devices.namesList() + ")");
        }
        bool used = false;
        for (const Node& node : graph.nodes()) {
            if (node.role() == OpRole::Compute && globMatch(rule.opPattern, node.op->name)) {
                used = true;
                break;
            }
        }
        if (!used)
            warnings->push_back("rule '" + rule.opPattern + "=" + rule.device +
                                "' matches no op of the graph");
    }
    if (!options.fallbackDevice.empty() && !devices.find(options.fallbackDevice)) {
        return SourceError::sentence("fallback device '" + options.fallbackDevice +
                                     "' is not a device (devices: " + devices.namesList() + ")");
    }
    return {};
}

} // namespace placer
