// Planner test helpers.
#include "PlanTestUtil.h"

#include "io/JsonGraph.h"
#include "io/RelayReader.h"

#include <QTest>

namespace placer::test {

DeviceSet devices(const char* spec, const char* defaultDevice) {
    auto parsed = DeviceSet::parse(spec);
    if (!parsed)
        qFatal("bad device spec in test: %s", parsed.error().message.c_str());
    DeviceSet set = parsed.take();
    if (defaultDevice)
        set.setDefaultDevice(*set.find(defaultDevice));
    return set;
}

Graph relay(const std::string& text, const DeviceSet& set) {
    auto graph = readRelay("#[version = \"0.0.5\"]\n" + text, set, "test.relay");
    if (!graph) {
        QTest::qFail(graph.error().toString().c_str(), __FILE__, __LINE__);
        return Graph();
    }
    return graph.take();
}

QString describeDevices(const Graph& graph, const DeviceSet& set, const Plan& plan) {
    QStringList parts;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.insertedCopy)
            continue;
        const DeviceId d = plan.devices[i];
        parts << QString::fromStdString(node.name + "=" + (d.valid() ? set[d].name : "?"));
    }
    return parts.join(' ');
}

QString describeCopies(const Graph& graph, const DeviceSet& set, const Plan& plan) {
    QStringList parts;
    for (const CopyPlan& copy : plan.copies)
        parts << QString::fromStdString(graph.valueName(copy.value) + " " + set[copy.from].name +
                                        ">" + set[copy.to].name + " " + std::to_string(copy.bytes));
    return parts.isEmpty() ? QStringLiteral("-") : parts.join("; ");
}

QString describeConflicts(const Plan& plan) {
    QStringList parts;
    for (const Conflict& conflict : plan.conflicts)
        parts << QString::fromStdString(std::string(conflictKindName(conflict.kind)));
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(' ');
}

QString describeReplicas(const Graph& graph, const DeviceSet& set, const Plan& plan) {
    QStringList parts;
    for (const Replica& replica : plan.replicas) {
        for (DeviceId d : replica.devices)
            parts << QString::fromStdString(graph.valueName(replica.value) + ":" + set[d].name);
    }
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(' ');
}

std::string snapshot(const Graph& graph, const DeviceSet& set) {
    return writeJsonGraph(graph, set).dump();
}

} // namespace placer::test
