// What work costs where: the time of a node on a device and of a copy between two devices, for
// the automatic placement (PlanMode::Auto) and for the schedule a plan predicts.
//
// A node's time comes from a measurement when the workspace has one for the same op, input
// shapes and types, attributes and physical device (medians from earlier runs, fed back by
// recordMeasured); otherwise from a roofline estimate: the op's arithmetic and bytes moved
// (opWork) against the physical device's peak FLOP/s and memory bandwidth, plus its launch
// overhead. A copy takes the pair's latency plus bytes over its bandwidth. The peaks come from
// `placer calibrate` when it has been run on this machine, and from assumptions otherwise.
//
// Virtual devices map onto physical ones (the run's --map, or the defaults by kind). Virtual
// devices that share a physical device share one resource, so they are never predicted to run
// at once; CPU devices beyond the machine's core count share the cores.
#pragma once

#include "io/Json.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace placer {

/// The arithmetic and the memory traffic of a node's kernel, from its shapes: multiply-adds
/// (two operations each) for convolutions and matrix products, one operation per output element
/// for the rest; bytes are its inputs and outputs. Zero for parameters, constants and copies.
struct OpWork {
    double flops = 0;
    double bytes = 0;
    DType dtype = DType::Float32; ///< what it computes in: its first output's type
};
OpWork opWork(const Graph& graph, NodeId node);

/// A physical device's measured or assumed capacity.
struct DeviceProfile {
    std::string name; ///< "cpu", "vcpu1", "cuda:0"
    bool gpu = false;
    /// Peak FLOP per µs: a CPU core with two AVX2 FMA units at 3 GHz, 1e5 (100 GFLOP/s),
    /// until calibrated.
    double flopsPerMicro = 1e5;
    /// Peak FLOP per µs of the element types whose rate is not flopsPerMicro's (a GPU's tensor
    /// cores in bfloat16): a machine file's peaks (plan/MachineFile.h).
    std::map<DType, double> typedFlopsPerMicro;
    double bytesPerMicro = 2e4; ///< memory bandwidth, bytes per µs (2e4: 20 GB/s)
    double launchMicros = 2;    ///< fixed time per kernel
    /// The executor's time per op around the kernel (dispatch, dependencies), which a kernel's
    /// own measured time does not include.
    double dispatchMicros = 1;
    /// The fixed time of a run that uses the device, once per run whatever its ops: waking its
    /// worker, starting and finishing the run.
    double runMicros = 10;
    bool calibrated = false;
    /// How many times its measured or estimated time a node takes on this device now: what a
    /// run that adapts (vm/RunAdaptation.h) measured of a device slowed by other work (> 1)
    /// or back to speed. 1 until a run says otherwise.
    double slowdown = 1;
};

/// A copy between two physical devices: latency + bytes / bandwidth.
struct LinkProfile {
    double latencyMicros = 5;
    double bytesPerMicro = 5e3;
    bool calibrated = false;
};

/// What `placer calibrate` measured on one machine.
struct Calibration {
    std::string machine;
    std::vector<DeviceProfile> devices;
    /// By (from, to) physical names.
    std::map<std::pair<std::string, std::string>, LinkProfile> links;

    Json toJson() const;
    static Result<Calibration> fromJson(const Json& json);
};

/// The assumed profile of a physical device of this kind before calibration.
DeviceProfile assumedProfile(const std::string& name, bool gpu);
LinkProfile assumedLink(bool fromGpu, bool toGpu);

class CostModel {
public:
    /// (virtual device, physical device) requests, as `placer run --map` takes them.
    using MapRequests = std::vector<std::pair<std::string, std::string>>;
    /// Each virtual device on the physical device a run gives it (device/DeviceMapping.h), with
    /// assumed profiles: `requests` first, then cpu on "cpu", a fresh vcpuN each, and a cuda
    /// device on "cuda:<ordinal>" where the machine has a GPU (`hasGpu`), else on a fresh vcpu.
    /// `cores`: the host's.
    static CostModel assumed(const DeviceSet& devices, int cores = 0,
                             const MapRequests& requests = {}, bool hasGpu = true);
    /// Virtual device `device` runs on the physical device `profile.name` (several may share).
    void mapDevice(int device, const DeviceProfile& profile);
    /// Takes the measured profiles and links of `calibration` for the physical devices it has.
    void apply(const Calibration& calibration);
    void setCores(int cores) {
        m_cores = cores;
        restamp();
    }
    /// Under mpirun: the host of each rank, so that CPUs of ranks on one host share its cores
    /// and those of ranks on other hosts do not. Physical names of other ranks' devices are
    /// qualified ("rank1/vcpu1"); a copy between ranks costs the link `placer calibrate`
    /// measured between them ("rank0" -> "rank1"), else an assumed network link.
    void setRankHosts(std::vector<std::string> hosts) {
        m_rankHosts = std::move(hosts);
        restamp();
    }
    int cores() const { return m_cores; }
    /// Every node on the physical device `physical` takes `factor` times its time
    /// (DeviceProfile::slowdown); false when no virtual device runs there.
    bool setSlowdown(const std::string& physical, double factor);

    int deviceCount() const { return static_cast<int>(m_physicalOf.size()); }
    /// The resource (physical device index) a virtual device runs on.
    int resourceOf(DeviceId device) const { return m_physicalOf[device.index]; }
    const DeviceProfile& physical(DeviceId device) const {
        return m_physical[static_cast<std::size_t>(resourceOf(device))];
    }
    const std::vector<DeviceProfile>& physicalDevices() const { return m_physical; }
    LinkProfile link(DeviceId from, DeviceId to) const;

    struct NodeCost {
        double micros = 0;
        bool measured = false;
    };
    /// The time of `node` on `device`: a measurement when there is one, else the roofline.
    NodeCost nodeCost(const Graph& graph, NodeId node, DeviceId device) const;
    /// The time of a fused group (passes/PassManager.h): `head`'s kernel computing `members` too,
    /// one op for the executor. A measurement of the group when there is one (groupKey), else
    /// the head's time and its members' kernels back to back.
    NodeCost groupCost(const Graph& graph, NodeId head, const std::vector<NodeId>& members,
                       DeviceId device) const;

    /// Which nodes the executor fuses into another when each node i runs on devices[i], the
    /// passes applying on the devices `cpu` marks: per node, the head of its group, or an
    /// invalid id (passes/PostOpFusion.h, fusedGroups). The planner lies below the runtime, so
    /// whoever makes the model hands it over; without it nothing is predicted fused.
    using Fusion = std::function<std::vector<NodeId>(
        const Graph& graph, const std::vector<DeviceId>& devices, const std::vector<bool>& cpu)>;
    void setFusion(Fusion fusion) {
        m_fusion = std::move(fusion);
        restamp();
    }
    /// Fusion's answer for this placement, the CPU devices being those mapped onto a CPU; empty
    /// when the model has no Fusion.
    std::vector<NodeId> fusedGroups(const Graph& graph, const std::vector<DeviceId>& devices) const;

    /// The roofline estimate alone.
    double roofline(const OpWork& work, DeviceId device) const;
    double copyMicros(std::int64_t bytes, DeviceId from, DeviceId to) const;

    /// What identifies a node's measurement: op, input types, attributes (not the device).
    static std::string nodeKey(const Graph& graph, NodeId node);
    /// What identifies a fused group's: its head's key and the ops it took, in order
    /// ("Conv(...) ... fused Add,Relu").
    static std::string groupKey(const Graph& graph, NodeId head,
                                const std::vector<NodeId>& members);
    /// The groups of a fusedGroups() answer: each head's members, in graph order.
    static std::map<std::uint32_t, std::vector<NodeId>>
    membersByHead(const std::vector<NodeId>& fusedInto);
    /// The name measurements on a physical device are kept under: "vcpu" for every vcpuN, and
    /// "rank1/vcpu" for every vcpu of rank 1 (measured there); any other by its own name.
    static std::string costClass(const std::string& physical);
    /// Records the median time of a node with this key on a physical device.
    void recordMeasured(const std::string& key, const std::string& physical, double micros);
    const std::map<std::string, double>& measured() const { return m_measured; }
    std::size_t measuredOn(const std::string& physical) const;

    /// The snapshot a plan is made with: profiles, links, measurements.
    Json toJson() const;
    static Result<CostModel> fromJson(const Json& json);

    /// Identifies what the model answers: a number no other model had, taken anew by every
    /// change (a copy keeps it until it changes). The planner keeps node costs by it from one
    /// plan to the next (PlanWorkspace::NodeCosts).
    std::uint64_t stamp() const { return m_stamp; }

private:
    void restamp();

    std::uint64_t m_stamp = nextStamp();
    static std::uint64_t nextStamp();
    std::vector<int> m_physicalOf; ///< per virtual device
    std::vector<DeviceProfile> m_physical;
    std::map<std::pair<std::string, std::string>, LinkProfile> m_links;
    std::map<std::string, double> m_measured; ///< "key@physical" -> µs
    int m_cores = 0;
    std::vector<std::string> m_rankHosts;
    Fusion m_fusion;
    /// How much of a core each CPU resource gets when there are more of them than cores.
    double cpuShare() const;
};

} // namespace placer
