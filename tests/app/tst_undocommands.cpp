// The undo commands on their own, on a QUndoStack as the window uses them: each edit re-plans,
// undo puts back exactly what was there (pins, mode, rules, devices with the pins and rules they
// touched), redo repeats it, and the commands' texts say what the step did.
#include "gui/UndoCommands.h"
#include "views/PlacementDocument.h"

#include <QUndoStack>
#include <QtTest>

using namespace placer;
using namespace placer::gui;

namespace {

const char* const kGraph = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(1, 1, 4, 4), float32], %w: Tensor[(1, 1, 1, 1), float32]) {
  %0 = nn.conv2d(%a, %w);
  %1 = nn.relu(%0);
  %2 = negative(%1);
  %2
}
)";

struct Fixture {
    views::PlacementDocument document;
    QUndoStack stack;
    Fixture() {
        QString error;
        if (!document.openText(kGraph, QStringLiteral("g.relay"), &error))
            qFatal("%s", qPrintable(error));
    }
    NodeId node(const char* name) const {
        const auto id = document.graph().find(name);
        if (!id)
            qFatal("no node %s", name);
        return *id;
    }
    DeviceId device(const char* name) const { return *document.devices().find(name); }
    std::string placed(const char* name) const {
        return document.devices()[document.plan().devices[node(name).index]].name;
    }
};

} // namespace

class TestUndoCommands : public QObject {
    Q_OBJECT

private slots:
    void pinningIsOneStepThatUndoes() {
        Fixture f;
        const std::string before = f.placed("%1");
        const std::string other = before == "gpu" ? "cpu" : "gpu";
        auto command = pinCommand(&f.document, QString::fromStdString(other), {f.node("%1")});
        QVERIFY(command);
        QCOMPARE(command->text(), QString("Pin %1 to %2").arg("%1", QString::fromStdString(other)));
        f.stack.push(command.release());
        QVERIFY(f.document.pin(f.node("%1")).active());
        QCOMPARE(f.document.pin(f.node("%1")).device, f.device(other.c_str()));
        QCOMPARE(f.placed("%1"), other);
        f.stack.undo();
        QVERIFY(!f.document.pin(f.node("%1")).active());
        QCOMPARE(f.placed("%1"), before);
        f.stack.redo();
        QCOMPARE(f.placed("%1"), other);
    }

    void pinningSeveralNodesNamesTheirCount() {
        Fixture f;
        auto command = pinCommand(&f.document, "cpu", {f.node("%0"), f.node("%1"), f.node("%2")});
        QVERIFY(command);
        QCOMPARE(command->text(), QStringLiteral("Pin 3 node(s) to cpu"));
        QVERIFY(!pinCommand(&f.document, "tpu", {f.node("%0")})); // no such device
        QVERIFY(!pinCommand(&f.document, "cpu", {}));             // nothing to pin
    }

    void clearingTouchesOnlyPinnedNodesAndRestoresThem() {
        Fixture f;
        QVERIFY(!clearPinsCommand(&f.document, {f.node("%0"), f.node("%1")})); // none pinned
        f.stack.push(pinCommand(&f.document, "cpu", {f.node("%0")}).release());
        f.stack.push(pinCommand(&f.document, "gpu", {f.node("%2")}).release());
        auto clear = clearPinsCommand(&f.document, {f.node("%0"), f.node("%1"), f.node("%2")});
        QVERIFY(clear);
        QCOMPARE(clear->text(), QStringLiteral("Clear 2 pin(s)"));
        f.stack.push(clear.release());
        for (const char* name : {"%0", "%1", "%2"})
            QVERIFY2(!f.document.pin(f.node(name)).active(), name);
        f.stack.undo();
        QCOMPARE(f.document.pin(f.node("%0")).device, f.device("cpu"));
        QCOMPARE(f.document.pin(f.node("%2")).device, f.device("gpu"));
        QVERIFY(!f.document.pin(f.node("%1")).active());
    }

    void modeAndRulesUndo() {
        Fixture f;
        f.stack.push(new SetModeCommand(&f.document, PlanMode::Unify));
        QCOMPARE(f.document.options().mode, PlanMode::Unify);
        QCOMPARE(f.stack.command(0)->text(), QStringLiteral("Planner mode: unify"));
        f.stack.push(new SetRulesCommand(&f.document, {{"nn.*", "cpu"}}, "gpu"));
        QCOMPARE(f.document.options().rules, (std::vector<OpRule>{{"nn.*", "cpu"}}));
        QCOMPARE(f.document.options().fallbackDevice, std::string("gpu"));
        QCOMPARE(f.placed("%0"), std::string("cpu"));
        QCOMPARE(f.placed("%1"), std::string("cpu"));
        f.stack.undo();
        QVERIFY(f.document.options().rules.empty());
        QVERIFY(f.document.options().fallbackDevice.empty());
        QCOMPARE(f.document.options().mode, PlanMode::Unify);
        f.stack.undo();
        QCOMPARE(f.document.options().mode, PlanMode::Demand);
        f.stack.redo();
        f.stack.redo();
        QCOMPARE(f.document.options().rules.size(), std::size_t{1});
    }

    void removingADeviceDropsItsPinsAndRulesUntilUndone() {
        Fixture f;
        f.stack.push(pinCommand(&f.document, "gpu", {f.node("%1")}).release());
        f.stack.push(new SetRulesCommand(&f.document, {{"negative", "gpu"}}, ""));
        // Keep only cpu: device 0 of the old set.
        DeviceSet onlyCpu;
        onlyCpu.add(f.document.devices()[f.device("cpu")]);
        onlyCpu.chooseDefaults();
        QString error;
        auto snapshot = f.document.withDevices(onlyCpu, {static_cast<int>(f.device("cpu").index)},
                                               {QColor()}, {""}, &error);
        QVERIFY2(snapshot, qPrintable(error));
        f.stack.push(new SetDevicesCommand(&f.document, std::move(*snapshot)));
        QCOMPARE(f.document.devices().size(), 1);
        QVERIFY(!f.document.pin(f.node("%1")).active());
        QVERIFY(f.document.options().rules.empty());
        QVERIFY(f.document.plan().conflicts.empty());
        f.stack.undo();
        QCOMPARE(f.document.devices().size(), 2);
        QCOMPARE(f.document.pin(f.node("%1")).device, f.device("gpu"));
        QCOMPARE(f.document.options().rules, (std::vector<OpRule>{{"negative", "gpu"}}));
        QCOMPARE(f.placed("%2"), std::string("gpu"));
    }
};

QTEST_MAIN(TestUndoCommands)
#include "tst_undocommands.moc"
