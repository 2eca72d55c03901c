// How each operator treats a batch: where its results carry the batch its inputs carry, or why
// it cannot run on each shard's rows apart. Operator semantics, declared next to the op registry
// so that adding an op means its declaration, its batch rule (by kernel family, here) and one
// kernel per backend; homogeneous splitting (plan/Split.h) follows the batch with it.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace placer {

/// Where a value carries the batch: along `axis`, whose extent is outer x batch x inner with the
/// batch in the middle (a plain batch axis has outer = inner = 1; a reshape can fold
/// neighbouring axes into it, a transpose move it). axis < 0: the value does not carry the batch
/// (every shard reads it whole).
struct BatchAxis {
    std::int32_t axis = -1;
    std::int64_t outer = 1, inner = 1;
    bool batched() const { return axis >= 0; }
    bool operator==(const BatchAxis&) const = default;
};

/// How an op treats the batch: where each of its results carries it, or why the op cannot run
/// on each shard's rows apart (a sentence completing "'conv1' ...": "reduces over the batch
/// axis").
struct BatchVerdict {
    std::optional<std::string> why;
    std::vector<BatchAxis> outputs;
};
/// The verdict for `node` given where each of its inputs carries a batch of `batch` rows.
BatchVerdict batchRule(const Graph& graph, const Node& node, const std::vector<BatchAxis>& inputs,
                       std::int64_t batch);

namespace batch {

/// The integers a constant node holds (any integer type), through device copies, or nothing.
std::optional<std::vector<std::int64_t>> constantInts(const Graph& graph, ValueRef value);
/// The value a chain of device copies moves (the value itself when it is no copy's).
ValueRef throughCopies(const Graph& graph, ValueRef value);
/// Whether a value is a constant, or a copy of one.
bool isConstantValue(const Graph& graph, ValueRef value);
/// Where a node reads a shape whose first entry is the batch size, which each shard must read
/// as its own rows: an input index, or -1 (Relay writes it as an attribute: shapeAttribute).
int shapeInput(const Node& node);
const char* shapeAttribute(const Node& node);
/// Whether input `k` of `node` is data the op computes over row by row, rather than its
/// weights, statistics, or a shape: only data inputs may carry the batch from outside a region.
bool readsAsData(const Graph& graph, const Node& node, std::size_t k);

} // namespace batch

} // namespace placer
