// Forward convolutions through cuDNN's graph (backend) API. The legacy search
// (cudnnFindConvolutionForwardAlgorithm) offers eight algorithms; the graph API's heuristics offer
// the engines cuDNN's frameworks run, each with its knobs (on an H100, the float32 implicit-GEMM
// kernels the legacy search never returns). Only full float32 arithmetic is taken: no tensor
// cores (TF32), no down-converted inputs or reduced-precision reductions, nothing
// nondeterministic, nothing compiled at run time.
//
// An engine configuration is kept as text, "e<global index>" then ".<knob type>=<value>" for
// each of its knobs, so that the algorithm cache (backends/cuda/CudaChecks.h) can keep the one
// measured fastest and every later process builds the same plan from it.
#pragma once

#include "core/ir/Result.h"

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace placer::cuda {

/// A float32 convolution over dense tensors in NC-spatial order, as cuDNN's graph sees it: x is
/// N, C, spatial...; w is K, C / groups, spatial...; y is N, K, spatial... (the groups follow
/// from x's and w's channels).
struct ConvShape {
    std::vector<std::int64_t> x, w, y;
    std::vector<std::int64_t> padBefore, padAfter, strides, dilations; ///< one per spatial axis
};

/// One engine configuration finalized for a shape on a cuDNN handle, ready to run.
class ConvPlan {
public:
    ConvPlan(const ConvPlan&) = delete;
    ConvPlan& operator=(const ConvPlan&) = delete;
    ~ConvPlan();

    /// The plan for `config` (an engine configuration as text); the error says which call
    /// refused it.
    static Result<std::shared_ptr<ConvPlan>> create(cudnnHandle_t handle, const ConvShape& shape,
                                                    const std::string& config);

    const std::string& config() const { return m_config; }
    std::int64_t workspace() const { return m_workspace; }

    /// y = conv(x, w) on the handle's stream. The tensors are declared 16-byte aligned: a
    /// pointer that is not (aligned() says) must not be passed.
    cudnnStatus_t run(cudnnHandle_t handle, const void* x, const void* w, void* y,
                      void* workspace) const;
    static bool aligned(const void* pointer);

private:
    friend std::vector<std::shared_ptr<ConvPlan>>
    convPlanCandidates(cudnnHandle_t, const ConvShape&, std::int64_t, std::size_t, std::string*);
    ConvPlan() = default;
    struct Graph;
    std::shared_ptr<Graph> m_graph; ///< the descriptors the plan was built from, kept alive
    cudnnBackendDescriptor_t m_plan = nullptr;
    std::string m_config;
    std::int64_t m_workspace = 0;
    /// The last variant pack and the pointers it holds: a node's buffers are mostly the same
    /// from one run to the next, and a variant pack costs a few microseconds to build.
    mutable std::mutex m_mutex;
    mutable cudnnBackendDescriptor_t m_pack = nullptr;
    mutable const void* m_packPointers[4] = {};
};

/// The engine configurations cuDNN's heuristics offer for `shape` (mode A's list, predicted
/// fastest first, then mode B's, then the fallback list; each once): only those with full float32
/// arithmetic (see above) and a workspace within `workspaceBudget`, at most `limit`, each of
/// which finalized into a plan. `notes` gets how many were offered and why the others were left.
std::vector<std::shared_ptr<ConvPlan>> convPlanCandidates(cudnnHandle_t handle,
                                                          const ConvShape& shape,
                                                          std::int64_t workspaceBudget,
                                                          std::size_t limit, std::string* notes);

} // namespace placer::cuda
