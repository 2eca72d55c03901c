// What an editor of a plan calls between its edits (session/Editing.h).
#include "session/Editing.h"

#include "io/Npy.h"
#include "io/OnnxWriter.h"
#include "kernels/RandomTensor.h"

#include <algorithm>
#include <cctype>

namespace placer {

PlannedModel adoptPlan(LoadedModel model, Plan plan, PlanOptions options,
                       std::optional<ModelSource> source) {
    PlannedModel planned;
    planned.request.devices = deviceSetSpec(model.devices);
    planned.request.options = options;
    planned.model = std::move(model);
    planned.plan = std::move(plan);
    planned.options = std::move(options);
    planned.source = std::move(source);
    return planned;
}

SplitAnalysis previewSplit(const Graph& graph, const DeviceSet& devices,
                           const SplitRequest& request) {
    return analyzeSplits(graph, devices, {request});
}

Result<HostTensor> inputFromText(const Graph& graph, const std::string& name,
                                 const std::string& text, std::uint64_t seed) {
    const auto id = graph.find(name);
    if (!id || graph.node(*id).role() != OpRole::Parameter)
        return SourceError::sentence("the model has no input '" + name + "'");
    const bool npy = text.size() >= 4 && [&] {
        std::string tail = text.substr(text.size() - 4);
        std::transform(tail.begin(), tail.end(), tail.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return tail == ".npy";
    }();
    if (npy) {
        auto tensor = readNpy(text);
        if (!tensor)
            return SourceError::sentence("input '" + name + "': " + tensor.error().toString());
        return tensor.take();
    }
    std::string shape;
    for (char c : text) {
        if (c == 'x')
            shape += ',';
        else if (c != ' ')
            shape += c;
    }
    auto parsed = parseInputShape(name + "=" + shape);
    if (!parsed)
        return SourceError::sentence("input '" + name + "': '" + text +
                                     "' is neither a .npy file nor a shape such as 2,16,64");
    const TensorType type{parsed.value().second, graph.node(*id).outputs[0].dtype};
    return randomTensor(type, seed);
}

} // namespace placer
