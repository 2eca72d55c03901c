// Every text form of a plan, chosen by name in one place: the CLI's `placer plan --emit`, the
// GUI's File ▸ Export and the Python module's Plan methods all call renderPlanExport(), so a new
// form is added once and every front end has it.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "plan/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

enum class PlanExportKind : std::uint8_t {
    Summary,              ///< "summary": the plan for people
    Report,               ///< "report" (or "json"): the plan report, JSON
    Relay,                ///< "relay": the planned program with on_device and device_copy
    Graph,                ///< "graph": the planned graph as a JSON graph
    Onnx,                 ///< "onnx": the planned graph as ONNX (copies as nodes)
    Dot,                  ///< "dot": Graphviz, coloured by device
    ModelExplorerDevices, ///< "me-devices": Model Explorer node data, each node's device
    ModelExplorerTimes,   ///< "me-times": Model Explorer node data, each node's run time
    Netron,               ///< "netron": ONNX whose nodes' documentation says placement and time
};

/// The kind `name` names ("summary", "report", "json", "relay", "graph", "onnx", "dot",
/// "me-devices", "me-times", "netron"), or none.
std::optional<PlanExportKind> planExportKind(std::string_view name);
/// Its name, the first of those above.
std::string_view planExportName(PlanExportKind kind);

/// What an export reads: the plan, and for some kinds more.
struct PlanExportSources {
    const Graph* graph = nullptr;
    const DeviceSet* devices = nullptr;
    const PlanOptions* options = nullptr;
    const Plan* plan = nullptr;
    /// me-devices: a CSS colour per device ("#9ec5e8"); empty: deviceColor()'s
    /// (report/DotWriter.h).
    std::vector<std::string> deviceColours;
    /// me-times and netron: each node's median time in ms (by NodeId index, negative where it
    /// did not run); empty: there is no run.
    std::vector<double> nodeMillis;
};

/// The export's text (ONNX's bytes for onnx and netron), or why this plan has none of that
/// kind: a model read from ONNX has no Relay form, me-times needs a run, netron a model read
/// from ONNX.
Result<std::string> renderPlanExport(PlanExportKind kind, const PlanExportSources& sources);

} // namespace placer
