// The Relay writer: planned programs go back to Relay text that reads back to the same plan.
#include "PlanTestUtil.h"

#include "io/RelayReader.h"
#include "io/RelayWriter.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"

#include <QTest>

using namespace placer;

class TestRelayWriter : public QObject {
    Q_OBJECT

private slots:
    void sharedInputIsWrittenTheTvmWay();
    void roundTrip_data();
    void roundTrip();
};

void TestRelayWriter::sharedInputIsWrittenTheTvmWay() {
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda", "gpu");
    const Graph graph =
        test::relay("def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32], %c: "
                    "Tensor[(5, 7), float32]) {"
                    "  %0 = add(%a, %b); %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
                    "  %2 = add(%b, %c); %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);"
                    "  subtract(%1, %3) }",
                    set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    const QString text = QString::fromStdString(writeRelay(applyPlan(graph, set, plan), set));
    QVERIFY(text.startsWith("#[version = \"0.0.5\"]\n"));
    QVERIFY2(text.contains(
                 "def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32], "
                 "%b {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32], "
                 "%c {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32], "
                 "virtual_device=meta[VirtualDevice][1])"),
             qPrintable(text));
    QVERIFY2(text.contains("%b_cpu = device_copy(%b, src_virtual_device=meta[VirtualDevice][1], "
                           "dst_virtual_device=meta[VirtualDevice][0]);"),
             qPrintable(text));
    QVERIFY2(
        text.contains("%0 = on_device(add(%a, %b_cpu), virtual_device=meta[VirtualDevice][0]);"),
        qPrintable(text));
    QVERIFY2(text.contains("\n  subtract(%0_gpu, %2)\n}\n"), qPrintable(text));
}

void TestRelayWriter::roundTrip_data() {
    QTest::addColumn<QString>("program");
    QTest::addColumn<int>("mode");
    const char* shared =
        "def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32], %c: Tensor[(5, 7), "
        "float32]) {"
        "  %0 = add(%a, %b); %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
        "  %2 = add(%b, %c); %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);"
        "  subtract(%1, %3) }";
    const char* cnn =
        "def @main(%d: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {"
        "  %0 = nn.conv2d(%d, %w, padding=[1, 1], channels=4, kernel_size=[3, 3]);"
        "  %1 = on_device(nn.relu(%0), virtual_device=meta[VirtualDevice][0], "
        "constrain_result=True);"
        "  %2 = split(%1, indices_or_sections=2, axis=1);"
        "  %3 = multiply(%2.0, 0.5f);"
        "  %4 = concatenate((%3, %2.1), axis=1);"
        "  %5 = shape_of(%4);"
        "  (%4, %5) }";
    for (int mode : {int(PlanMode::Demand), int(PlanMode::Unify)}) {
        const QByteArray suffix = mode == int(PlanMode::Demand) ? "/demand" : "/unify";
        QTest::newRow("shared-input" + suffix) << shared << mode;
        QTest::newRow("cnn-tuple-constants" + suffix) << cnn << mode;
    }
}

void TestRelayWriter::roundTrip() {
    QFETCH(QString, program);
    QFETCH(int, mode);
    const DeviceSet set = test::devices();
    PlanOptions options;
    options.mode = static_cast<PlanMode>(mode);
    const Graph graph = test::relay(program.toStdString(), set);
    const Plan plan = planDevices(graph, set, options);
    const Graph planned = applyPlan(graph, set, plan);
    const std::string text = writeRelay(planned, set);

    auto reread = readRelay(text, set, "planned.relay");
    QVERIFY2(reread, reread ? "" : (reread.error().toString() + "\n" + text).c_str());
    const Plan replan = planDevices(reread.value(), set, options);
    QVERIFY2(replan.conflicts.empty(), text.c_str());
    // Every node is where it was; the copies are now explicit and are the same transfers.
    const Graph& g2 = reread.value();
    for (const Node& node : planned.nodes()) {
        if (node.insertedCopy)
            continue;
        const auto id = g2.find(node.name);
        QVERIFY2(id, node.name.c_str());
        QCOMPARE(set[replan.devices[id->index]].name, set[node.device].name);
    }
    QCOMPARE(test::describeCopies(g2, set, replan), test::describeCopies(graph, set, plan));
    // And writing it again gives the same text.
    QCOMPARE(writeRelay(applyPlan(reread.value(), set, replan), set), text);
}

QTEST_APPLESS_MAIN(TestRelayWriter)
#include "tst_relaywriter.moc"
