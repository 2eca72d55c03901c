// Per-node times measured elsewhere, put on a model's graph: ONNX Runtime's profile JSON
// (SessionOptions.enableProfiling), its node events matched to the model's nodes by the names
// ONNX Runtime gives them, fused nodes mapped back to their members. What matched, what did not
// and why, so that a profile of another model says so (docs/user/profiles.md).
#pragma once

#include "io/Json.h"
#include "ir/Graph.h"
#include "ir/Result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// A model node's time in the profile.
struct ImportedTime {
    NodeId node;
    double medianMicros = 0; ///< over the profile's runs
    int events = 0;          ///< how many events it stands for (runs, loop iterations summed)
    std::string provider;    ///< "CPUExecutionProvider", "CUDAExecutionProvider"
    std::string event;       ///< the name the profile gave the node
    std::string op;          ///< the op the profile ran ("Conv", "FusedMatMul", "Gemm")
    /// When it started in the profile's last run, from the run's start (-1: the profile has no
    /// run spans): where a timeline draws it.
    double startMicros = -1;
    /// The model's nodes it computed besides this one (a Relu fused into a Conv): their time is
    /// in this one's.
    std::vector<NodeId> fused;
};

struct ProfileImport {
    std::string source; ///< "onnxruntime"
    std::string path;
    int runs = 0;
    /// Matched nodes, in graph order.
    std::vector<ImportedTime> times;
    /// Events no node of the model stands for, with why (a layout change the runtime inserted,
    /// a node of another model).
    struct Unmatched {
        std::string event, op, why;
        double medianMicros = 0;
    };
    std::vector<Unmatched> unmatchedEvents;
    /// Compute nodes of the model without a time, with why.
    struct Missing {
        NodeId node;
        std::string why;
    };
    std::vector<Missing> missing;
    int computeNodes = 0;
    int matchedEvents = 0, events = 0;
    std::vector<std::string> warnings;

    /// Compute nodes with a time (their own or a fused group's), of all.
    int nodesWithTimes() const;
    double nodeMatchRate() const;
    /// The time of `node` where it has one of its own.
    const ImportedTime* timeOf(NodeId node) const;
};

/// Reads ONNX Runtime's profile `text` (from `path`, for messages) against `graph`: a JSON array
/// of trace events whose "Node" events name the nodes ONNX Runtime ran. An error when the text
/// is not such a profile (with the line and column of bad JSON), when it has no node events,
/// and when none of them is a node of `graph`.
Result<ProfileImport> importOnnxRuntimeProfile(const Graph& graph, std::string_view text,
                                               const std::string& path);

/// The import as `placer profile import --json` writes it.
Json profileImportJson(const Graph& graph, const ProfileImport& imported);
/// The import as `placer profile import` prints it: what matched, the slowest nodes, what did not
/// match and why.
std::string profileImportSummary(const Graph& graph, const ProfileImport& imported);

} // namespace placer
