// What the planner returns: a device and a reason for every node, the copies and replicas the
// placement needs, conflicts, notes, and the memory plan.
#pragma once

#include "ir/BatchRule.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace placer {

enum class PlanMode : std::uint8_t {
    Demand, ///< an unpinned node lives where its consumers need it (the default)
    Unify,  ///< TVM-compatible: nodes joined by hard edges share a device
    Auto,   ///< unpinned ops go where the cost model predicts the shortest latency
};

std::string_view planModeName(PlanMode mode);
std::optional<PlanMode> parsePlanMode(std::string_view name);
/// "0.412 ms": a predicted or measured time.
std::string formatMillis(double micros);
/// "21.4 items/s": `items` done in `micros`.
std::string formatItemsPerSecond(double items, double micros);

class CostModel;

enum class ConstantPolicy : std::uint8_t {
    Replicate, ///< one instance per device that uses it, made at load time
    Copy,      ///< one instance, copied on every run like any other value
};

/// An op-name rule: ops whose name matches `opPattern` (a glob) go to `device`.
struct OpRule {
    std::string opPattern;
    std::string device;
    bool operator==(const OpRule&) const = default;
};

/// One device of a `--split` request and its share of the batch (0: an even share).
struct SplitShare {
    std::string device;
    std::int64_t share = 0;
    bool operator==(const SplitShare&) const = default;
};

/// "NODES=DEV[:SHARE],DEV[:SHARE],...": the compute nodes matched by `nodePattern` (a node name,
/// alias or glob, or several joined by '|') run once per device on that device's rows of the
/// batch (plan/Split.h).
struct SplitRequest {
    std::string nodePattern;
    std::vector<SplitShare> shards;
    /// The planner's own request for --micro-batches (never the user's): each shard is a
    /// micro-batch that runs every node on the device the plan gave it, so shards name no device
    /// and pins stay where they are.
    bool microBatches = false;
    /// With microBatches: the batches of a stream (PlanOptions::streamBatches), each cut into
    /// `shards.size()` micro-batches.
    std::int32_t batches = 1;
    /// A `--shard` request: the nodes are cut inside, their weights and values sharded across
    /// the devices (plan/TensorShard.h), not the batch.
    bool tensor = false;
    bool operator==(const SplitRequest&) const = default;
};

struct PlanOptions {
    PlanMode mode = PlanMode::Demand;
    ConstantPolicy constants = ConstantPolicy::Replicate;
    std::vector<OpRule> rules;
    std::string fallbackDevice; ///< empty: none given
    /// Regions sharded across devices on the batch axis, in the order given (plan/Split.h).
    std::vector<SplitRequest> splits;
    bool planMemory = true;
    /// What work costs where (plan/CostModel.h). With one, the plan predicts its schedule;
    /// PlanMode::Auto uses it to place (assumed costs when none is given).
    std::shared_ptr<const CostModel> costs;
    /// Auto: also solve the exact programme (GLPK) on graphs small enough for it.
    bool exact = false;
    /// Auto, with no split or pipeline asked for: also weigh every op sharded inside across the
    /// largest group of devices of one kind (--shard '*'), and take it when it is predicted
    /// at least a sixth faster than the best placement (planDevices).
    bool autoShard = true;
    /// Pipelining (--micro-batches M): the batch is cut on axis 0 into M micro-batches that flow
    /// through the devices as the plan places the ops, each device a stage working on one
    /// micro-batch while the next device works on the one before. 1: no pipelining.
    std::int32_t microBatches = 1;
    /// Throughput mode (--stream N): N batches run back to back through the pipeline, batch
    /// k + 1's micro-batches entering the first stage while batch k's drain from the last. The
    /// graph that runs reads every input as the N batches stacked on axis 0 and writes every
    /// output so; every op must treat the rows of the batch independently. 1: one batch.
    std::int32_t streamBatches = 1;
    /// (constant, device), by name: copied to the device on every run rather than replicated
    /// there, whatever `constants` says. Auto mode decides such copies itself where a device's
    /// memory cannot keep a constant; the optimised graph is planned with them
    /// (passes/PassManager.h).
    std::vector<std::pair<std::string, std::string>> copiedConstants;
    /// The sizes of the dimensions the model's inputs name to place (auto mode) and predict at
    /// (a run's, or the user's: --cost-at seq=128), where values' shapes follow them
    /// (Node::symbolicShapes); empty: the sizes the graph is planned at.
    SymbolValues costAt;
    /// Devices out of service, by name, each with why ("failed at iteration 5: ..."): a run
    /// that lost a device plans again without it (vm/RunAdaptation.h). Nothing is placed there;
    /// a node pinned or ruled onto one falls back as from a device without its kernel (for a
    /// pin, an OutOfService conflict that says why). Names of no device are ignored.
    std::vector<std::pair<std::string, std::string>> outOfService;
    /// Also simulate a run event by event (plan/RunSimulator.h) with the costs: Plan::simulation,
    /// what `placer run --machine` shows of a machine this one is not.
    bool simulate = false;
    /// Why `device` is out of service, or null when it is not.
    const std::string* outOfServiceWhy(const std::string& device) const {
        for (const auto& [name, why] : outOfService) {
            if (name == device)
                return &why;
        }
        return nullptr;
    }
    bool operator==(const PlanOptions&) const = default;
};

/// Why a node got its device.
enum class ReasonKind : std::uint8_t {
    Pin,             ///< a plain pin
    FixedPin,        ///< a fixed pin (constrain_result / parameter virtual_device)
    RejectedPin,     ///< pinned to a device without a kernel: fell back (a conflict)
    CopyDestination, ///< a device_copy lives on its destination
    Rule,            ///< an op-name rule
    RuleFallback,    ///< rules were given and none covers the op: the fallback device
    KernelFallback,  ///< the device it would get has no kernel for it: the fallback device
    HostOnly,        ///< a host-only op: the host device
    Class,           ///< unify: its class has exactly one fixed device
    ClassDefault,    ///< unify: its class has no fixed device
    Consumers,       ///< the device most of its consumers run on
    ConsumersTie,    ///< consumers split evenly: the default device, or the lowest index
    NoConsumers,     ///< nothing consumes it: the default device
    Auto,            ///< auto mode: the cost model's choice
    Split,           ///< sharded across a split region's devices; `devices` holds the first
    /// auto mode: a constant kept here and copied on every run to `wanted`, whose memory cannot
    /// keep it
    Offloaded,
};

struct Reason {
    ReasonKind kind = ReasonKind::NoConsumers;
    NodeId via;               ///< the deciding consumer, or the node that fixes the class
    DeviceId wanted;          ///< for fallbacks: the device it would have had
    std::int32_t rule = -1;   ///< index into PlanOptions::rules
    std::int32_t region = -1; ///< ReasonKind::Split: index into Plan::splits
    std::int32_t votes = 0;   ///< consumers on the chosen device
    std::int32_t voters = 0;
    std::int32_t classSize = 0;
    bool fromResult = false; ///< the deciding constraint is a result's required device
};

/// One transfer of a value to a device: inserted by the planner, or an explicit device_copy.
struct CopyPlan {
    ValueRef value; ///< the value moved (for an explicit copy, the device_copy's input)
    DeviceId from;
    DeviceId to;
    std::int64_t bytes = 0;
    std::vector<NodeId> consumers; ///< nodes that read the copy
    bool toOutput = false;         ///< a graph result is required on `to`
    bool isExplicit = false;       ///< an explicit device_copy in the input
    NodeId copyNode;               ///< the explicit device_copy node, if any
    /// The value's size is found only at run time (ir/Graph.h shapeFoundAtRun): `bytes` is its
    /// planned stand-in's, and a run moves what the value then holds.
    bool sizeAtRun = false;
    /// Where the value's shape follows the dimensions the model's inputs name: its size in them
    /// ("batch×seq×256 B"); `bytes` is then the size at the planned values. Empty otherwise.
    std::string symbolicSize;
};

/// A conversion a device's precision policy needs (VirtualDevice::computeType,
/// plan/Precision.h): a float32 value read in 16 bits by a node that computes in them, or a
/// 16-bit result read in float32. It runs on the device that reads (after any copy, so that a
/// copy out of a 16-bit device moves 16 bits), and a graph result goes back to float32 on the
/// device that made it.
struct CastPlan {
    ValueRef value;  ///< the value converted, of the planned graph
    DeviceId device; ///< where the conversion runs
    DType from = DType::Float32;
    DType to = DType::Float32;
    std::int64_t bytes = 0;        ///< the converted tensor's
    std::vector<NodeId> consumers; ///< the nodes that read it
    bool toOutput = false;         ///< a graph result, given back in float32
    /// A constant's: converted once as it is loaded, not at every run.
    bool atLoad = false;
};

struct Replica {
    ValueRef value;
    DeviceId home;
    std::vector<DeviceId> devices; ///< the further devices holding an instance
};

enum class ConflictKind : std::uint8_t {
    NoKernel,       ///< pinned to a device that has no kernel for the op
    DType,          ///< pinned to a device whose kernel cannot hold the dtype
    HostOnly,       ///< a host-only op pinned away from the host
    PinsDisagree,   ///< two pins on one node name different devices
    CopySource,     ///< an explicit device_copy whose src contradicts its producer's pin
    MemoryCapacity, ///< a device's memory plan exceeds its capacity
    UnknownDevice,  ///< a rule or the fallback names a device that is not in the set
    Unsupported,    ///< no device has a kernel for the op
    Split,          ///< a split region that cannot be split as asked (plan/Split.h)
    OutOfService,   ///< pinned to a device that is out of service (PlanOptions::outOfService)
};

struct Conflict {
    ConflictKind kind;
    std::vector<NodeId> nodes;
    std::vector<std::string> sources; ///< where the contradicting constraints came from
    std::string message;
    std::string suggestion;
};

std::string_view conflictKindName(ConflictKind kind);

struct StorageInfo {
    std::int32_t id = 0; ///< unique across the plan
    DeviceId device;
    std::int64_t bytes = 0;
};

struct DeviceMemory {
    DeviceId device;
    std::int64_t peakBytes = 0; ///< sum of the device's storages: what it must hold
    std::int64_t liveBytes = 0; ///< the most bytes of live tensors at any one time
    std::vector<std::int32_t> storages;
};

/// Storage of one tensor instance.
struct TensorStorage {
    ValueRef value;
    DeviceId device;
    std::int32_t storage = -1;
};

struct MemoryPlan {
    /// The order the storages were assigned in, which the lowering emits the nodes in (each
    /// followed by the copies of its outputs): plan/ExecutionOrder.h.
    std::vector<NodeId> order;
    std::vector<StorageInfo> storages;
    std::vector<DeviceMemory> devices; ///< one per device of the set, in order
    std::vector<TensorStorage> tensors;
};

/// The schedule a plan predicts from its cost model: what the executor is expected to do.
struct Prediction {
    double makespanMicros = 0;
    /// Per node (0 for those that take no time): predicted start, end and kernel time.
    std::vector<double> start, end, micros;
    /// Per node: whether its time comes from a measurement rather than the roofline.
    std::vector<std::uint8_t> measured;
    /// Per node: the node whose fused kernel is predicted to compute it (its time is that
    /// node's), or an invalid id.
    std::vector<NodeId> fusedInto;
    /// Per node: predicted time of the copies into it from other devices.
    std::vector<double> copyInMicros;
    /// Per node, auto mode: the best other device it could take and its time there with the
    /// copies it would then need (invalid when it had no choice).
    std::vector<DeviceId> alternative;
    std::vector<double> alternativeMicros;
    std::vector<double> deviceBusyMicros; ///< per device of the set
    // Auto mode's search.
    double heftMicros = 0;
    double singleDeviceMicros = 0; ///< the best placement on one device (inf when none)
    /// No split was predicted 20 % faster than the best single device, which took everything.
    bool keptSingleDevice = false;
    int evaluations = 0;
    std::string exactStatus;
    std::optional<double> exactOptimumMicros;
};

/// A run simulated event by event on the plan's devices (plan/RunSimulator.h), with the cost
/// model's rates and links: copies as work on links that concurrent transfers share.
struct Simulation {
    /// Whether its nodes are the sharded graph's (Plan::sharded), as a split plan runs it.
    bool ofShardedGraph = false;
    double makespanMicros = 0;
    std::vector<double> start, end; ///< per node (0 for those that take no time)
    struct Transfer {
        NodeId producer;
        DeviceId from, to;
        std::int64_t bytes = 0;
        double start = 0, end = 0;
        double alone = 0; ///< had its link been its own
        bool betweenHosts = false;
    };
    std::vector<Transfer> transfers;
    /// Where the time went (RunSimulator.h SimulatedRun).
    double computeMicros = 0, launchMicros = 0, copyMicros = 0, contentionMicros = 0;
    double runOverheadMicros = 0;
    std::vector<double> deviceBusyMicros; ///< per device of the set
};

/// One device's part of a split region: its device and its rows [begin, end) of the batch.
struct Shard {
    DeviceId device;
    std::int64_t share = 1;
    std::int64_t begin = 0, end = 0;
    std::int64_t rows() const { return end - begin; }
};

/// How the shards of a tensor-sharded region (--shard, plan/TensorShard.h) hold a value, as
/// GSPMD and PyTorch's DTensor write it: each a copy of it (R), each a slice of one axis (S), or
/// each a partial sum that adds up to it (P).
struct Sharding {
    enum class Kind : std::uint8_t { Replicate, Shard, Partial };
    Kind kind = Kind::Replicate;
    std::int32_t axis = -1;           ///< Shard: the axis cut
    std::vector<std::int64_t> bounds; ///< Shard: per shard its offset along it, then the extent
    /// Shard: the axis is `blocks` equal blocks (a fused projection's Q, K and V), each cut by
    /// `bounds` (offsets within a block); each shard holds its part of every block, in order.
    std::int32_t blocks = 1;
    bool operator==(const Sharding&) const = default;
    bool sharded() const { return kind == Kind::Shard; }
    /// "R", "S(1)", "S(2)x3" (in 3 blocks), "P".
    std::string text() const;
};

/// What each shard of a tensor-sharded node reads for one of its inputs.
struct ShardRead {
    enum class Kind : std::uint8_t {
        Own,       ///< its own part, as the value's sharding holds it (a copy, when replicated)
        Whole,     ///< the whole value: gathered or summed from the shards when they cut it
        Slice,     ///< its slice [bounds[s], bounds[s + 1]) on `axis` of the whole value
        FirstOnly, ///< the first shard reads the whole value, the others leave it out
    };
    Kind kind = Kind::Own;
    std::int32_t axis = -1;
    std::vector<std::int64_t> bounds;
    std::int32_t blocks = 1; ///< Slice: of each of this many equal blocks of the axis
    bool operator==(const ShardRead&) const = default;
};

/// One node of a tensor-sharded region: what its shards read and how they hold its outputs.
struct TensorShardOp {
    std::vector<ShardRead> inputs;
    std::vector<Sharding> outputs;
    /// Shards after the first take input `passThrough` as their output (a bias added once to a
    /// partial sum), or -1.
    std::int32_t passThrough = -1;
    std::string why; ///< the rule that sharded it, for "why is this here?"
    bool operator==(const TensorShardOp&) const = default;
};

/// A collective a tensor-sharded region needs: shards that cut a value made whole (AllGather)
/// or partial sums added up (AllReduce) on every device of the region, or on one where the
/// value leaves it (Gather, Reduce).
struct Collective {
    enum class Kind : std::uint8_t { AllReduce, AllGather, Reduce, Gather };
    Kind kind = Kind::AllReduce;
    ValueRef value;         ///< the user's value
    std::int64_t bytes = 0; ///< what the devices receive together
    std::string reason;     ///< the reader that needs it whole
    bool operator==(const Collective&) const = default;
};
std::string_view collectiveName(Collective::Kind kind);

/// A region of the graph sharded across devices on the batch axis (plan/Split.h), or inside its
/// ops (`tensor`, plan/TensorShard.h).
struct SplitRegion {
    std::int32_t request = -1; ///< index into PlanOptions::splits; -1 for micro-batches
    /// The micro-batches of a pipelined plan (PlanOptions::microBatches): every shard runs each
    /// node on the node's own device, and Shard::device is not used.
    bool microBatched = false;
    /// The batches of a stream (PlanOptions::streamBatches): the shards are batch-major, each
    /// batch's micro-batches in turn, and the values entering and leaving the region carry
    /// `batches` x `batch` rows.
    std::int32_t batches = 1;
    std::string name;          ///< "split1": what its shards' node names carry
    std::vector<NodeId> nodes; ///< the user's nodes it runs once per shard, in graph order
    /// Per node of `nodes`, per output: where it carries the batch.
    std::vector<std::vector<BatchAxis>> axes;
    /// A tensor-sharded region (--shard): per node of `nodes`, how its shards compute it (no
    /// `axes`; each shard's begin and end are its share of the whole, out of `batch`).
    bool tensor = false;
    /// The request as given ("*=a,b") and its node pattern, for reports; `autoChosen` when auto
    /// mode chose it (PlanOptions::autoShard), so that no option names it.
    std::string requested, pattern;
    bool autoChosen = false;
    std::vector<TensorShardOp> ops;
    std::vector<Collective> collectives;
    std::vector<Shard> shards;
    std::int64_t batch = 0;
    std::vector<ValueRef> inputs;  ///< values split on the batch axis where the region starts
    std::vector<ValueRef> shared;  ///< values every shard reads whole (weights, constants)
    std::vector<ValueRef> outputs; ///< values concatenated on the batch axis where it ends
    /// Device copies between two of its nodes (a plan's copies applied to the graph), which the
    /// shards skip: each reads its own rows where it runs.
    std::vector<NodeId> bypassed;
};

struct Plan;

/// The graph that runs when a plan splits: each split region's nodes once per shard (named
/// "NODE/REGION.SHARD"), the Split nodes at its entries and the Concat nodes at its exits
/// inserted, every compute node pinned where it runs, and that graph's own plan.
struct ShardedGraph {
    Graph graph;
    std::shared_ptr<const Plan> plan;
    /// Per node of `graph`: the user's node it computes (invalid for an inserted Split, Concat
    /// or per-shard shape constant), its region (index into Plan::splits, -1 outside one) and its
    /// shard (-1 outside one).
    std::vector<NodeId> origin;
    std::vector<std::int32_t> region, shard;
};

struct Plan {
    std::vector<DeviceId> devices; ///< per node
    std::vector<Reason> reasons;   ///< per node
    std::vector<CopyPlan> copies;  ///< ordered by producer, output, destination
    /// The precision policies' conversions, ordered by value then device; empty when no
    /// device has one.
    std::vector<CastPlan> casts;
    std::vector<Replica> replicas;
    std::vector<Conflict> conflicts;
    std::vector<std::string> notes;
    /// The memory plan; when the plan splits, the sharded graph's (each shard on its device).
    MemoryPlan memory;
    /// The regions split across devices, in the order of PlanOptions::splits.
    std::vector<SplitRegion> splits;
    /// When a region is split: the graph that runs (lower and run it instead of the user's).
    std::shared_ptr<const ShardedGraph> sharded;
    /// Present when the options carried a cost model, or in auto mode.
    std::optional<Prediction> prediction;
    /// Present with the prediction when the options ask to simulate (PlanOptions::simulate).
    std::shared_ptr<const Simulation> simulation;

    std::int64_t copiedBytes() const;
    /// The split region that runs `node` once per shard, or null when one device runs it.
    const SplitRegion* splitOf(NodeId node) const;
    /// The nodes `node`'s device was derived from, nearest first: the consumer that decided it,
    /// that consumer's own decider, and so on, ending at a node placed by a pin, rule, copy or
    /// default. Empty when the node decided by itself.
    std::vector<NodeId> reasonChain(NodeId node) const;
    /// For every node, the last node of its reason chain (the pin, rule, copy or default that
    /// decided it), or an invalid id when the node decided by itself. Linear in the graph.
    std::vector<NodeId> reasonRoots() const;
    /// A sentence saying why `node` is on its device.
    std::string explain(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                        NodeId node) const;
};

} // namespace placer
