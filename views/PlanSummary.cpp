// The status bar's line on the current plan.
#include "views/PlanSummary.h"

#include "views/PlacementDocument.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

namespace placer::views {

QString planSummary(const PlacementDocument& document) {
    const Plan& plan = document.plan();
    const DeviceSet& devices = document.devices();
    // The copies that run: the sharded graph's when the plan splits.
    const Plan& running = plan.sharded ? *plan.sharded->plan : plan;
    int copies = 0;
    for (const CopyPlan& copy : running.copies)
        copies += copy.isExplicit ? 0 : 1;
    int regions = 0, microBatches = 0, streamed = 0;
    for (const SplitRegion& region : plan.splits) {
        if (region.nodes.empty())
            continue;
        if (region.microBatched) {
            streamed = region.batches > 1 && !region.shards.empty() ? region.batches : 0;
            microBatches = static_cast<int>(region.shards.size()) / std::max(region.batches, 1);
            microBatches = microBatches > 1 ? microBatches : 0;
        } else {
            ++regions;
        }
    }
    QStringList memory;
    for (const DeviceMemory& device : plan.memory.devices) {
        QString entry = QString::fromStdString(devices[device.device].name + " " +
                                               formatBytes(device.peakBytes));
        if (const auto& capacity = devices[device.device].memoryCapacity)
            entry += QStringLiteral(" / ") + QString::fromStdString(formatBytes(*capacity));
        memory << entry;
    }
    // Where shapes follow named dimensions, the sizes above are at their planned values.
    QStringList symbols;
    for (const auto& [name, value] : document.graph().symbolValues)
        symbols << QString::fromStdString(name) + QLatin1Char('=') + QString::number(value);
    // The prediction's sizes, where it is costed at others than the plan's (a run's).
    QStringList costAt;
    if (!symbols.isEmpty()) {
        for (const auto& [name, value] : document.options().costAt)
            costAt << QString::fromStdString(name) + QLatin1Char('=') + QString::number(value);
    }
    const int conflicts = static_cast<int>(plan.conflicts.size());
    const QString separator = QStringLiteral("  ·  ");
    return QCoreApplication::translate("PlanSummary", "%n copy(ies), %1 copied", nullptr, copies)
               .arg(QString::fromStdString(formatBytes(running.copiedBytes()))) +
           (symbols.isEmpty()
                ? QString()
                : QLatin1Char(' ') + QCoreApplication::translate("PlanSummary", "(sizes at %1)")
                                         .arg(symbols.join(QStringLiteral(", ")))) +
           (plan.casts.empty()
                ? QString()
                : separator + QCoreApplication::translate("PlanSummary", "%n cast(s)", nullptr,
                                                          static_cast<int>(plan.casts.size()))) +
           (regions > 0 ? separator + QCoreApplication::translate(
                                          "PlanSummary", "%n region(s) split", nullptr, regions)
                        : QString()) +
           (microBatches > 0 ? separator + QCoreApplication::translate(
                                               "PlanSummary", "pipelined in %n micro-batch(es)",
                                               nullptr, microBatches)
                             : QString()) +
           (streamed > 0
                ? separator + QCoreApplication::translate("PlanSummary", "a stream of %n batch(es)",
                                                          nullptr, streamed)
                : QString()) +
           // A large graph's memory plan may follow with its prediction.
           (memory.isEmpty()
                ? QString()
                : separator + QCoreApplication::translate("PlanSummary", "peak memory: %1")
                                  .arg(memory.join(QStringLiteral(", ")))) +
           separator +
           QCoreApplication::translate("PlanSummary", "%n conflict(s)", nullptr, conflicts) +
           (document.predictionPending()
                ? separator + QCoreApplication::translate("PlanSummary", "predicting…")
            : !plan.prediction ? QString()
            : costAt.isEmpty()
                ? separator + QCoreApplication::translate("PlanSummary", "predicted latency: %1")
                                  .arg(QString::fromStdString(
                                      formatMillis(plan.prediction->makespanMicros)))
                : separator +
                      QCoreApplication::translate("PlanSummary", "predicted latency at %2: %1")
                          .arg(
                              QString::fromStdString(formatMillis(plan.prediction->makespanMicros)),
                              costAt.join(QStringLiteral(", ")))) +
           separator +
           QCoreApplication::translate("PlanSummary", "planned in %1 ms")
               .arg(document.lastPlanMillis(), 0, 'f', 2) +
           (document.graph().foldedNodes() > 0
                ? separator + QCoreApplication::translate("PlanSummary",
                                                          "%n node(s) folded at load", nullptr,
                                                          document.graph().foldedNodes())
                : QString());
}

} // namespace placer::views
