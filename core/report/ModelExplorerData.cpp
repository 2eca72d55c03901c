// Node data for Google's Model Explorer: each node's device and run time
// (report/ModelExplorerData.h).
#include "report/ModelExplorerData.h"

namespace placer {

Json modelExplorerDeviceData(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                             const std::vector<std::string>& colours) {
    Json results = Json::object();
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const DeviceId device = plan.devices[i];
        if (!device.valid())
            continue;
        Json entry = Json::object();
        entry.set("value", devices[device].name);
        if (static_cast<std::size_t>(device.index) < colours.size())
            entry.set("bgColor", colours[device.index]);
        results.set(graph.nodes()[i].name, std::move(entry));
    }
    Json data = Json::object();
    data.set("results", std::move(results));
    return data;
}

Json modelExplorerTimeData(const Graph& graph, const std::vector<double>& millisPerNode) {
    Json results = Json::object();
    for (std::uint32_t i = 0; i < graph.size() && i < millisPerNode.size(); ++i) {
        if (millisPerNode[i] < 0)
            continue;
        Json entry = Json::object();
        entry.set("value", millisPerNode[i]);
        results.set(graph.nodes()[i].name, std::move(entry));
    }
    Json gradient = Json::array();
    for (const auto& [stop, colour] :
         {std::pair{0.0, "#2ca25f"}, std::pair{0.5, "#fee08b"}, std::pair{1.0, "#d73027"}}) {
        Json item = Json::object();
        item.set("stop", stop);
        item.set("bgColor", colour);
        gradient.push(std::move(item));
    }
    Json data = Json::object();
    data.set("results", std::move(results));
    data.set("gradient", std::move(gradient));
    return data;
}

} // namespace placer
