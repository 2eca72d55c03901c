// Model loading with format detection.
#include "io/ModelLoader.h"

#include <cstdlib>

#include "io/Json.h"
#include "io/JsonGraph.h"
#include "io/MappedFile.h"
#include "io/OnnxReader.h"
#include "io/RelayReader.h"
#include "io/SymbolicShapes.h"
#include "ir/StringPool.h"

#include <map>

namespace placer {

std::optional<GraphFormat> parseGraphFormat(std::string_view name) {
    if (name == "relay")
        return GraphFormat::Relay;
    if (name == "json")
        return GraphFormat::Json;
    if (name == "onnx")
        return GraphFormat::Onnx;
    if (name == "auto")
        return GraphFormat::Auto;
    return std::nullopt;
}

DeviceSet defaultDeviceSet() {
    return DeviceSet::parse("cpu:cpu,gpu:cuda").take();
}

namespace {

GraphFormat detectFormat(std::string_view text, const std::string& fileName) {
    auto endsWith = [&](std::string_view suffix) {
        return fileName.size() >= suffix.size() &&
               std::string_view(fileName).substr(fileName.size() - suffix.size()) == suffix;
    };
    if (endsWith(".json"))
        return GraphFormat::Json;
    if (endsWith(".onnx"))
        return GraphFormat::Onnx;
    if (endsWith(".relay") || endsWith(".rly"))
        return GraphFormat::Relay;
    if (looksLikeOnnx(text))
        return GraphFormat::Onnx;
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' ? GraphFormat::Json
                                                                 : GraphFormat::Relay;
}

/// "ops without a kernel on any device: Foo (3 nodes), Bar (1 node)".
void reportUnsupportedOps(LoadedModel& model) {
    std::map<std::string, int> counts;
    for (const Node& node : model.graph.nodes()) {
        if (node.role() == OpRole::Compute && !node.op->hasAnyKernel())
            ++counts[node.op->name];
    }
    if (counts.empty())
        return;
    std::string list;
    for (const auto& [op, count] : counts)
        list += (list.empty() ? "" : ", ") + op + " (" + std::to_string(count) +
                (count == 1 ? " node)" : " nodes)");
    model.warnings.push_back("ops without a kernel on any device: " + list);
}

std::string baseName(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    const std::size_t dot = name.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

} // namespace

Result<std::pair<std::string, std::vector<std::int64_t>>> parseInputShape(std::string_view text) {
    const std::size_t equals = text.find('=');
    auto fail = [&](const std::string& why) {
        return SourceError{"", 0, 0, "'" + std::string(text) + "': " + why};
    };
    if (equals == std::string_view::npos || equals == 0)
        return fail("expected NAME=D1,D2,... (e.g. input=1,3,224,224)");
    std::vector<std::int64_t> dims;
    std::string_view rest = text.substr(equals + 1);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string item(rest.substr(0, comma));
        char* end = nullptr;
        const long long value = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || value < 0)
            return fail("'" + item + "' is not a dimension (a non-negative integer)");
        dims.push_back(value);
        if (comma == std::string_view::npos)
            break;
        rest = rest.substr(comma + 1);
        if (rest.empty())
            return fail("a dimension is missing after the last comma");
    }
    return std::pair{std::string(text.substr(0, equals)), dims};
}

namespace {

Result<LoadedModel> readModel(std::string_view text, std::shared_ptr<const MappedFile> file,
                              const std::string& fileName, GraphFormat format,
                              const std::optional<DeviceSet>& devices,
                              const InputShapes& inputShapes, const RunInputs& runInputs);

/// A model from its bytes; `file`, when given, is the mapped file they are. A model whose
/// strings overflow the process's pool (ir/StringPool.h) is an error, not an abort.
Result<LoadedModel> loadModel(std::string_view text, std::shared_ptr<const MappedFile> file,
                              const std::string& fileName, GraphFormat format,
                              const std::optional<DeviceSet>& devices,
                              const InputShapes& inputShapes, const RunInputs& runInputs) {
    try {
        return readModel(text, std::move(file), fileName, format, devices, inputShapes, runInputs);
    } catch (const StringPoolFull& full) {
        return SourceError{fileName, 0, 0, full.what()};
    }
}

Result<LoadedModel> readModel(std::string_view text, std::shared_ptr<const MappedFile> file,
                              const std::string& fileName, GraphFormat format,
                              const std::optional<DeviceSet>& devices,
                              const InputShapes& inputShapes, const RunInputs& runInputs) {
    if (format == GraphFormat::Auto)
        format = detectFormat(text, fileName);
    LoadedModel model;
    if (format != GraphFormat::Onnx && !inputShapes.empty())
        return SourceError{fileName, 0, 0,
                           "input shapes are given, but only ONNX models have symbolic "
                           "dimensions to fix; this model's shapes are static"};
    if (format == GraphFormat::Onnx) {
        model.devices = devices ? *devices : defaultDeviceSet();
        OnnxReadOptions options;
        options.inputShapes = inputShapes;
        options.runInputs = runInputs;
        options.bytesFile = std::move(file);
        auto graph =
            readOnnx(text, fileName, &model.devices, devices.has_value(), &model.warnings, options);
        if (!graph)
            return graph.error();
        model.graph = graph.take();
        reportUnsupportedOps(model);
        // Shapes in the dimensions the inputs name: the model read again at other sizes of them.
        const ShapeProbe probe = [&](const InputShapes& shapes) {
            OnnxReadOptions at = options;
            for (const auto& [name, dims] : shapes) {
                at.inputShapes[name] = dims;
                at.runInputs.erase(name);
            }
            DeviceSet probeDevices = model.devices;
            std::vector<std::string> ignored;
            return readOnnx(text, fileName, &probeDevices, true, &ignored, at);
        };
        SymbolicShapeSummary symbolic = annotateSymbolicShapes(model.graph, probe);
        // Constants folded from the sizes by no expression of them stay computed, at run time
        // (as the Relay VM's shape functions are): the model read so serves every size, where
        // the graph folded at these sizes would have to be read again at each.
        for (int round = 0; round < 3 && !symbolic.unfittedConstants.empty(); ++round) {
            options.keepComputed.insert(symbolic.unfittedConstants.begin(),
                                        symbolic.unfittedConstants.end());
            DeviceSet keptDevices = model.devices;
            std::vector<std::string> ignored;
            auto kept = readOnnx(text, fileName, &keptDevices, true, &ignored, options);
            if (!kept)
                break;
            Graph previous = std::move(model.graph);
            model.graph = kept.take();
            SymbolicShapeSummary again = annotateSymbolicShapes(model.graph, probe);
            if (!again.skipped.empty()) { // no better than folded: keep that read
                model.graph = std::move(previous);
                break;
            }
            symbolic = std::move(again);
        }
        if (!symbolic.skipped.empty())
            model.warnings.push_back("shapes are shown at their planned sizes: " +
                                     symbolic.skipped);
    } else if (format == GraphFormat::Json) {
        auto document = Json::parse(text, fileName);
        if (!document)
            return document.error();
        auto fileDevices = readJsonGraphDevices(document.value(), fileName);
        if (!fileDevices)
            return fileDevices.error();
        model.devices = devices               ? *devices
                        : fileDevices.value() ? *fileDevices.value()
                                              : defaultDeviceSet();
        auto graph = readJsonGraph(document.value(), model.devices, fileName);
        if (!graph)
            return graph.error();
        model.graph = graph.take();
    } else {
        model.devices = devices ? *devices : defaultDeviceSet();
        auto graph = readRelay(text, model.devices, fileName);
        if (!graph)
            return graph.error();
        model.graph = graph.take();
    }
    if (model.graph.name.empty())
        model.graph.name = baseName(fileName);
    return model;
}

} // namespace

Result<LoadedModel> loadModelText(std::string_view text, const std::string& fileName,
                                  GraphFormat format, const std::optional<DeviceSet>& devices,
                                  const InputShapes& inputShapes, const RunInputs& runInputs) {
    return loadModel(text, nullptr, fileName, format, devices, inputShapes, runInputs);
}

Result<LoadedModel> loadModelFile(const std::string& path, GraphFormat format,
                                  const std::optional<DeviceSet>& devices,
                                  const InputShapes& inputShapes, const RunInputs& runInputs) {
    // Mapped, not read: an ONNX model's weights stay in the file's pages, read when used.
    auto file = MappedFile::open(path);
    if (!file)
        return file.error();
    const std::string_view bytes = file.value()->bytes();
    return loadModel(bytes, file.take(), path, format, devices, inputShapes, runInputs);
}

} // namespace placer
