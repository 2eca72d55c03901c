// Placement requests as users write them on a command line: NODE=DEV pins and OP=DEV rules.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// "NODE=DEV" where NODE is a node name, alias or glob.
struct PinRequest {
    std::string nodePattern;
    std::string device;
    bool fixed = false;
};

/// Where an assignment splits: at the last '=' when the right side is a device name (a node
/// name may hold '='), at the first when the left side is a plain name and the right side may
/// hold '=' ("--map gpu=vcpu1:mem=1GiB", "--input x=dir=1/x.npy").
enum class SplitAt : std::uint8_t { LastEquals, FirstEquals };

struct Assignment {
    std::string lhs, rhs;
};
/// Splits "LHS=RHS"; an error when there is no '=' or either side is empty.
Result<Assignment> splitAssignment(std::string_view text, SplitAt at = SplitAt::LastEquals);

/// Pins every node whose name or alias matches each request (later requests win over earlier
/// ones and over pins from the file). Fails with a sentence when a request names an unknown
/// device or matches no node; the graph is then unchanged.
Status applyPinRequests(Graph& graph, const DeviceSet& devices,
                        const std::vector<PinRequest>& requests);

/// Checks rules and the fallback device against the device set before planning, for tools that
/// treat an unknown device as an error rather than a conflict. Warnings (a rule that matches no
/// op of the graph) go to *warnings.
Status validateRules(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                     std::vector<std::string>* warnings);

} // namespace placer
