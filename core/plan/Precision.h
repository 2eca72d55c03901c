// Precision policies: a device that computes its float32 work in float16 or bfloat16
// (`gpu:cuda:dtype=bf16`, VirtualDevice::computeType). Which nodes compute in 16 bits there, and
// the conversions that placement then needs (Plan::casts): a float32 value read by such a node is
// cast on the reading device, a 16-bit result read in float32 is cast where it is read (so a
// copy out of the device moves 16 bits), a constant is converted once as it is loaded, and a
// graph result is given back in float32. The planner lists them (planCasts); the precision pass
// (passes/PrecisionCasts.h) makes the graph that runs from the same decisions.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>
#include <vector>

namespace placer {

/// Whether any device of `devices` has a precision policy.
bool hasPrecisionPolicy(const DeviceSet& devices);

/// Whether input `k` of `node` is read in the type its node computes in: a float32 operand, but
/// not one ONNX requires in float32 whatever the data's type (Resize's and Upsample's scales).
bool followsComputeType(const Node& node, std::size_t k);

/// Per node of `graph`, each on `placed[i]` (its device; invalid for none): the type its float32
/// values take where it runs. A compute node on a device with a policy takes the policy's type
/// when it computes in float32 from a float32 operand and the device kind has a kernel for it in
/// that type; control flow, Cast, host-only ops and ops whose float32 results come from
/// attributes alone (ConstantOfShape) stay float32. Every other node: Float32.
std::vector<DType> computeTypes(const Graph& graph, const DeviceSet& devices,
                                const std::vector<DeviceId>& placed);

/// How many nodes of `plan` on `device` computeTypes() `types` narrows to 16 bits.
std::int64_t narrowedOn(const std::vector<DType>& types, const Plan& plan, DeviceId device);

/// The type the float32 value `value` is made in: its producer's compute type for a float32
/// output, else the value's own type.
DType producedType(const Graph& graph, const std::vector<DType>& types, ValueRef value);

/// Fills `plan->casts` for `graph` placed by `plan->devices`, and gives each copy of a value made
/// in 16 bits its 16-bit size. Nothing changes when no device has a policy.
void planCasts(const Graph& graph, const DeviceSet& devices, Plan* plan);

/// "to bfloat16 on gpu for 3 readers (256 KiB)": one cast, for reports and the GUI.
std::string castText(const Graph& graph, const DeviceSet& devices, const CastPlan& cast);

/// Casts' bytes in all, and per direction: what the plan converts at every run (constants'
/// conversions at load are not counted).
std::int64_t castBytesPerRun(const Plan& plan);

} // namespace placer
