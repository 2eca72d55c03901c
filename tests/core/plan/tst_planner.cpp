// The planner's semantics as golden scenarios: for each program and options, the device of every
// node, the copies (value, from, to, bytes), the replicas and the conflicts, in both modes where
// they differ.
#include "PlanTestUtil.h"

#include "io/RelayReader.h"
#include "plan/Annotations.h"
#include "plan/Planner.h"

#include <QTest>

using namespace placer;

namespace {

// A (5, 7) float32 tensor: 140 bytes.
constexpr const char* T = "Tensor[(5, 7), float32]";

QString program(QString text) {
    return text.replace("$T", T);
}

enum Modes { DemandOnly = 1, UnifyOnly = 2, BothModes = 3 };

struct Setup {
    const char* devices = "cpu:cpu,gpu:cuda";
    const char* defaultDevice = nullptr;
    const char* rules = ""; ///< "OP=DEV,OP=DEV"
    const char* fallback = "";
    const char* constants = "replicate";
    const char* pins = ""; ///< "NODE=DEV,..." as --pin
};

} // namespace

class TestPlanner : public QObject {
    Q_OBJECT

private slots:
    void scenarios_data();
    void scenarios();
    void reasonsExplainEveryNode();
    void reasonChainReachesThePin();
    void longChainPlansWithoutRecursion();
    void longRelayChainParsesAndPlans();
    void memoryCapacityExceededIsAConflict();
    void noDevicesGivesAnEmptyPlan();

private:
    void addRow(const char* name, const QString& text, const char* devices, const char* copies,
                const char* conflicts, Modes modes = BothModes, Setup setup = {},
                const char* replicas = "-");
};

void TestPlanner::addRow(const char* name, const QString& text, const char* devices,
                         const char* copies, const char* conflicts, Modes modes, Setup setup,
                         const char* replicas) {
    for (PlanMode mode : {PlanMode::Demand, PlanMode::Unify}) {
        if (!(modes & (mode == PlanMode::Demand ? DemandOnly : UnifyOnly)))
            continue;
        const QByteArray row = QByteArray(name) + (mode == PlanMode::Demand ? "/demand" : "/unify");
        QTest::newRow(row.constData())
            << program(text) << QString(setup.devices)
            << QString(setup.defaultDevice ? setup.defaultDevice : "") << int(mode)
            << QString(setup.rules) << QString(setup.fallback) << QString(setup.constants)
            << QString(setup.pins) << QString(devices) << QString(copies) << QString(conflicts)
            << QString(replicas);
    }
}

void TestPlanner::scenarios_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("deviceSpec");
    QTest::addColumn<QString>("defaultDevice");
    QTest::addColumn<int>("mode");
    QTest::addColumn<QString>("rules");
    QTest::addColumn<QString>("fallback");
    QTest::addColumn<QString>("constants");
    QTest::addColumn<QString>("pins");
    QTest::addColumn<QString>("expectedDevices");
    QTest::addColumn<QString>("expectedCopies");
    QTest::addColumn<QString>("expectedConflicts");
    QTest::addColumn<QString>("expectedReplicas");

    addRow("everything-on-default",
           "def @main(%x: $T, %y: $T) { %0 = add(%x, %y); %1 = multiply(%0, %x); nn.relu(%1) }",
           "%x=gpu %y=gpu %0=gpu %1=gpu nn.relu=gpu", "-", "-");

    addRow("one-op-pinned-copy-after",
           "def @main(%x: $T, %y: $T) { %0 = add(%x, %y); %1 = on_device(%0, "
           "virtual_device=meta[VirtualDevice][0]); %2 = multiply(%1, %1); nn.relu(%2) }",
           "%x=cpu %y=cpu %0=cpu %2=gpu nn.relu=gpu", "%0 cpu>gpu 140", "-");

    addRow("both-operands-pinned",
           "def @main(%x: $T, %y: $T) {"
           "  %0 = on_device(negative(%x), virtual_device=meta[VirtualDevice][0]);"
           "  %1 = on_device(exp(%y), virtual_device=meta[VirtualDevice][0]);"
           "  add(%0, %1) }",
           "%x=cpu %y=cpu %0=cpu %1=cpu add=gpu", "%0 cpu>gpu 140; %1 cpu>gpu 140", "-");

    const QString shared =
        "def @main(%a: $T, %b: $T, %c: $T) {"
        "  %0 = add(%a, %b); %1 = on_device(%0, virtual_device=meta[VirtualDevice][FIRST]);"
        "  %2 = add(%b, %c); %3 = on_device(%2, virtual_device=meta[VirtualDevice][SECOND]);"
        "  subtract(%1, %3) }";
    auto sharedWith = [&](const char* first, const char* second) {
        return QString(shared).replace("FIRST", first).replace("SECOND", second);
    };
    Setup defaultGpu;
    defaultGpu.defaultDevice = "gpu";
    addRow("shared-input-two-devices", sharedWith("0", "1"),
           "%a=cpu %b=gpu %c=gpu %0=cpu %2=gpu subtract=gpu", "%b gpu>cpu 140; %0 cpu>gpu 140", "-",
           BothModes, defaultGpu);
    addRow("shared-input-roles-swapped", sharedWith("1", "0"),
           "%a=gpu %b=gpu %c=cpu %0=gpu %2=cpu subtract=gpu", "%b gpu>cpu 140; %2 cpu>gpu 140", "-",
           BothModes, defaultGpu);
    Setup defaultCpu;
    defaultCpu.defaultDevice = "cpu";
    addRow("shared-input-default-cpu", sharedWith("0", "1"),
           "%a=cpu %b=cpu %c=gpu %0=cpu %2=gpu subtract=cpu", "%b cpu>gpu 140; %2 gpu>cpu 140", "-",
           BothModes, defaultCpu);

    addRow("same-value-annotated-twice",
           "def @main(%x: $T, %y: $T) { %0 = add(%x, %y);"
           "  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
           "  %2 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
           "  multiply(%1, %2) }",
           "%x=cpu %y=cpu %0=cpu multiply=gpu", "%0 cpu>gpu 140", "-");

    const char* sharedProducer =
        "def @main(%x: $T, %y: $T, %z: $T) { %0 = negative(%x);"
        "  %1 = on_device(add(%0, %y), virtual_device=meta[VirtualDevice][0]);"
        "  %2 = multiply(%0, %z); subtract(%1, %2) }";
    addRow("producer-shared-by-pinned-and-unpinned", sharedProducer,
           "%x=gpu %y=cpu %z=gpu %0=gpu %1=cpu %2=gpu subtract=gpu",
           "%0 gpu>cpu 140; %1 cpu>gpu 140", "-", DemandOnly);
    addRow("producer-shared-by-pinned-and-unpinned", sharedProducer,
           "%x=cpu %y=cpu %z=cpu %0=cpu %1=cpu %2=cpu subtract=cpu", "-", "-", UnifyOnly);

    const char* fixedParameter =
        "def @main(%x {virtual_device=meta[VirtualDevice][0]}: $T, %y: $T) {"
        "  %0 = add(%x, %y); nn.relu(%0) }";
    addRow("parameter-with-virtual-device", fixedParameter, "%x=cpu %y=gpu %0=gpu nn.relu=gpu",
           "%x cpu>gpu 140", "-", DemandOnly);
    addRow("parameter-with-virtual-device", fixedParameter, "%x=cpu %y=cpu %0=cpu nn.relu=cpu", "-",
           "-", UnifyOnly);

    addRow("explicit-device-copy",
           "def @main(%x: $T, %y: $T) { %0 = add(%x, %y);"
           "  %1 = device_copy(%0, src_virtual_device=meta[VirtualDevice][0],"
           "                   dst_virtual_device=meta[VirtualDevice][1]);"
           "  nn.relu(%1) }",
           "%x=cpu %y=cpu %0=cpu %1=gpu nn.relu=gpu", "%0 cpu>gpu 140", "-");

    addRow(
        "explicit-copy-contradicts-pin",
        "def @main(%x: $T) { %0 = on_device(negative(%x), virtual_device=meta[VirtualDevice][1]);"
        "  %1 = device_copy(%0, src_virtual_device=meta[VirtualDevice][0],"
        "                   dst_virtual_device=meta[VirtualDevice][1]);"
        "  nn.relu(%1) }",
        "%x=gpu %0=gpu %1=gpu nn.relu=gpu", "-", "copy-source");

    // In unify mode %x joins the pinned multiply's class (edges into ops are hard), and the
    // add follows %x: the whole program moves to the CPU, as TVM places it.
    const char* letBound =
        "def @main(%x: $T, %y: $T) {"
        "  let %t = on_device(multiply(%x, %y), virtual_device=meta[VirtualDevice][0]);"
        "  let %u: $T = add(%t, %x);"
        "  nn.relu(%u) }";
    addRow("let-bound-value-on-other-device", letBound, "%x=gpu %y=cpu %t=cpu %u=gpu nn.relu=gpu",
           "%x gpu>cpu 140; %t cpu>gpu 140", "-", DemandOnly);
    addRow("let-bound-value-on-other-device", letBound, "%x=cpu %y=cpu %t=cpu %u=cpu nn.relu=cpu",
           "-", "-", UnifyOnly);

    const char* tuples = "def @main(%x: Tensor[(4, 8), float32]) {"
                         "  %0 = split(%x, indices_or_sections=2, axis=1);"
                         "  %1 = on_device(negative(%0.0), virtual_device=meta[VirtualDevice][0]);"
                         "  %2 = (%1, %0.1);"
                         "  %3 = concatenate(%2, axis=1);"
                         "  (%3, %2.1) }";
    addRow("tuple-and-projection", tuples, "%x=gpu %0=gpu %1=cpu %3=gpu",
           "%0.0 gpu>cpu 64; %1 cpu>gpu 64", "-", DemandOnly);
    addRow("tuple-and-projection", tuples, "%x=cpu %0=cpu %1=cpu %3=cpu", "-", "-", UnifyOnly);

    addRow("host-only-op-pinned-to-gpu",
           "def @main(%x: $T) { %0 = shape_of(%x);"
           "  %1 = on_device(%0, virtual_device=meta[VirtualDevice][1]); cast(%1, "
           "dtype=\"float32\") }",
           "%x=cpu %0=cpu cast=gpu", "%0 cpu>gpu 16", "host-only");

    addRow("pin-to-device-without-kernel-for-dtype",
           "def @main(%d: Tensor[(1, 3, 8, 8), int32], %w: Tensor[(4, 3, 3, 3), int32]) {"
           "  %0 = on_device(nn.conv2d(%d, %w, padding=[1, 1]), "
           "virtual_device=meta[VirtualDevice][1]);"
           "  nn.relu(%0) }",
           "%d=cpu %w=cpu %0=cpu nn.relu=gpu", "%0 cpu>gpu 1024", "dtype");

    addRow("two-contradictory-pins",
           "def @main(%x: $T) { %0 = negative(%x);"
           "  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
           "  %2 = on_device(%0, virtual_device=meta[VirtualDevice][1]);"
           "  exp(%2) }",
           "%x=cpu %0=cpu exp=gpu", "%0 cpu>gpu 140", "pins-disagree");

    Setup unknownRule;
    unknownRule.rules = "nn.relu=tpu";
    addRow("rule-names-unknown-device", "def @main(%x: $T) { %0 = negative(%x); nn.relu(%0) }",
           "%x=gpu %0=gpu nn.relu=gpu", "-", "unknown-device", BothModes, unknownRule);

    Setup globs;
    globs.rules = "nn.conv*=gpu,nn.*pool*=gpu";
    globs.fallback = "cpu";
    addRow("op-rules-with-globs-and-fallback",
           "def @main(%d: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],"
           "          %b: Tensor[(4), float32]) {"
           "  %0 = nn.conv2d(%d, %w, padding=[1, 1]);"
           "  %1 = nn.bias_add(%0, %b);"
           "  %2 = nn.relu(%1);"
           "  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2]);"
           "  nn.batch_flatten(%3) }",
           "%d=gpu %w=gpu %b=cpu %0=gpu %1=cpu %2=cpu %3=gpu nn.batch_flatten=cpu",
           "%0 gpu>cpu 1024; %2 cpu>gpu 1024; %3 gpu>cpu 256", "-", BothModes, globs);

    const char* sharedConstant =
        "def @main(%x: $T) { %c = 2f;"
        "  %0 = on_device(multiply(%x, %c), virtual_device=meta[VirtualDevice][0]);"
        "  add(%0, %c) }";
    // A replicated constant constrains nobody, in either mode; a copied one is an ordinary
    // value, and in unify mode joins the pinned multiply's class.
    addRow("constants-replicated", sharedConstant, "%x=cpu %c=gpu %0=cpu add=gpu", "%0 cpu>gpu 140",
           "-", BothModes, {}, "%c:cpu");
    Setup copied;
    copied.constants = "copy";
    addRow("constants-copied", sharedConstant, "%x=cpu %c=gpu %0=cpu add=gpu",
           "%c gpu>cpu 4; %0 cpu>gpu 140", "-", DemandOnly, copied);
    addRow("constants-copied", sharedConstant, "%x=cpu %c=cpu %0=cpu add=cpu", "-", "-", UnifyOnly,
           copied);

    Setup cliPins;
    cliPins.pins = "%1=cpu";
    addRow("command-line-pin-on-alias", "def @main(%x: $T) { %0 = negative(%x); %1 = %0; exp(%1) }",
           "%x=cpu %0=cpu exp=gpu", "%0 cpu>gpu 140", "-", BothModes, cliPins);

    addRow("result-virtual-device",
           "def @main(%x: $T, virtual_device=meta[VirtualDevice][0]) {"
           "  %0 = on_device(negative(%x), virtual_device=meta[VirtualDevice][1]); exp(%0) }",
           "%x=gpu %0=gpu exp=cpu", "%0 gpu>cpu 140", "-");

    Setup threeDevices;
    threeDevices.devices = "cpu:cpu,gpu0:cuda,gpu1:cuda";
    addRow("three-devices-majority-of-consumers",
           "def @main(%x: $T) { %0 = negative(%x);"
           "  %1 = on_device(exp(%0), virtual_device=meta[VirtualDevice][2]);"
           "  %2 = on_device(tanh(%0), virtual_device=meta[VirtualDevice][2]);"
           "  %3 = on_device(sqrt(%0), virtual_device=meta[VirtualDevice][0]);"
           "  (%1, %2, %3) }",
           "%x=gpu1 %0=gpu1 %1=gpu1 %2=gpu1 %3=cpu", "%0 gpu1>cpu 140", "-", DemandOnly,
           threeDevices);
}

void TestPlanner::scenarios() {
    QFETCH(QString, text);
    QFETCH(QString, deviceSpec);
    QFETCH(QString, defaultDevice);
    QFETCH(int, mode);
    QFETCH(QString, rules);
    QFETCH(QString, fallback);
    QFETCH(QString, constants);
    QFETCH(QString, pins);
    QFETCH(QString, expectedDevices);
    QFETCH(QString, expectedCopies);
    QFETCH(QString, expectedConflicts);
    QFETCH(QString, expectedReplicas);

    const DeviceSet set =
        test::devices(deviceSpec.toUtf8().constData(),
                      defaultDevice.isEmpty() ? nullptr : defaultDevice.toUtf8().constData());
    Graph graph = test::relay(text.toStdString(), set);
    QVERIFY(graph.size() > 0);

    PlanOptions options;
    options.mode = static_cast<PlanMode>(mode);
    options.constants = constants == "copy" ? ConstantPolicy::Copy : ConstantPolicy::Replicate;
    options.fallbackDevice = fallback.toStdString();
    for (const QString& rule : rules.split(',', Qt::SkipEmptyParts)) {
        const QStringList parts = rule.split('=');
        options.rules.push_back({parts[0].toStdString(), parts[1].toStdString()});
    }
    std::vector<PinRequest> requests;
    for (const QString& pin : pins.split(',', Qt::SkipEmptyParts)) {
        const QStringList parts = pin.split('=');
        requests.push_back({parts[0].toStdString(), parts[1].toStdString(), false});
    }
    const Status pinned = applyPinRequests(graph, set, requests);
    QVERIFY2(pinned.ok(), pinned.ok() ? "" : pinned.error().message.c_str());

    const Plan plan = planDevices(graph, set, options);
    QCOMPARE(test::describeDevices(graph, set, plan), expectedDevices);
    QCOMPARE(test::describeCopies(graph, set, plan), expectedCopies);
    QCOMPARE(test::describeConflicts(plan), expectedConflicts);
    QCOMPARE(test::describeReplicas(graph, set, plan), expectedReplicas);
    for (const Conflict& conflict : plan.conflicts) {
        QVERIFY2(!conflict.message.empty(), "every conflict says what is wrong");
        QVERIFY2(!conflict.suggestion.empty(), "every conflict suggests a fix");
        QVERIFY2(!conflict.sources.empty(), "every conflict names its sources");
    }
}

void TestPlanner::reasonsExplainEveryNode() {
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda", "gpu");
    const Graph graph = test::relay(
        program("def @main(%a: $T, %b: $T, %c: $T) {"
                "  %0 = add(%a, %b); %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);"
                "  %2 = add(%b, %c); %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);"
                "  subtract(%1, %3) }")
            .toStdString(),
        set);
    const PlanOptions options;
    const Plan plan = planDevices(graph, set, options);
    auto why = [&](const char* name) {
        return QString::fromStdString(plan.explain(graph, set, options, *graph.find(name)));
    };
    QCOMPARE(why("%a"), QString("its consumer %0 runs on cpu"));
    QVERIFY2(why("%b").contains("split evenly") && why("%b").contains("default device gpu"),
             qPrintable(why("%b")));
    QVERIFY2(why("%0").startsWith("pinned to cpu by on_device at test.relay:"),
             qPrintable(why("%0")));
    QCOMPARE(why("subtract"), QString("nothing consumes it: default device gpu"));
    // %a follows %0, which is pinned: the chain stops there.
    QCOMPARE(plan.reasonChain(*graph.find("%a")), std::vector<NodeId>{*graph.find("%0")});
    QVERIFY(plan.reasonChain(*graph.find("%0")).empty());
    QCOMPARE(plan.notes.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(plan.notes[0]),
             QString("%b is used on gpu and cpu: placed on gpu, copied to cpu, 140 B each"));
}

void TestPlanner::reasonChainReachesThePin() {
    const DeviceSet set = test::devices();
    const Graph graph = test::relay(
        program("def @main(%x: $T) { %0 = negative(%x); %1 = exp(%0);"
                "  %2 = on_device(tanh(%1), virtual_device=meta[VirtualDevice][0]); sqrt(%2) }")
            .toStdString(),
        set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    std::vector<std::string> names;
    for (NodeId id : plan.reasonChain(*graph.find("%x")))
        names.push_back(graph.node(id).name);
    QCOMPARE(names, (std::vector<std::string>{"%0", "%1", "%2"}));
    // Every node's root is where its chain ends, computed for all nodes at once.
    const std::vector<NodeId> roots = plan.reasonRoots();
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const std::vector<NodeId> chain = plan.reasonChain(NodeId(i));
        QCOMPARE(roots[i], chain.empty() ? NodeId() : chain.back());
    }
    QCOMPARE(set[plan.devices[0]].name, std::string("cpu"));
}

void TestPlanner::longChainPlansWithoutRecursion() {
    // 200,000 nodes in a chain; the pin in the middle moves the producers that feed only it.
    const DeviceSet set = test::devices();
    Graph graph;
    Node input;
    input.name = "%x";
    input.op = &OpRegistry::global().parameter();
    input.outputs = {TensorType{{16}, DType::Float32}};
    NodeId previous = graph.addNode(std::move(input));
    const OpDef* relu = OpRegistry::global().find("nn.relu");
    constexpr std::uint32_t kLength = 200000;
    for (std::uint32_t i = 0; i < kLength; ++i) {
        Node node;
        node.name = "%" + std::to_string(i);
        node.op = relu;
        node.inputs = {ValueRef{previous, 0}};
        node.outputs = {TensorType{{16}, DType::Float32}};
        previous = graph.addNode(std::move(node));
    }
    graph.addOutput(GraphOutput{ValueRef{previous, 0}, DeviceId()});
    graph.node(*graph.find("%100000")).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    for (PlanMode mode : {PlanMode::Demand, PlanMode::Unify}) {
        PlanOptions options;
        options.mode = mode;
        const Plan plan = planDevices(graph, set, options);
        QCOMPARE(plan.devices[0], DeviceId(0));
        QCOMPARE(plan.devices[100001], DeviceId(0)); // %100000
        QCOMPARE(plan.devices[100002], DeviceId(1)); // %100001
        QCOMPARE(plan.devices[kLength], DeviceId(1));
        QCOMPARE(plan.copies.size(), std::size_t(1));
        QVERIFY(plan.conflicts.empty());
        // Memory: a chain needs two alternating storages on each device, plus the parameter
        // and the result's own.
        QVERIFY(plan.memory.devices[1].storages.size() <= 4);
    }
}

void TestPlanner::longRelayChainParsesAndPlans() {
    std::string text = "def @main(%x: Tensor[(4), float32]) {\n  %0 = negative(%x);\n";
    constexpr int kLength = 200000;
    for (int i = 1; i < kLength; ++i)
        text += "  %" + std::to_string(i) + " = exp(%" + std::to_string(i - 1) + ");\n";
    text += "  %" + std::to_string(kLength - 1) + "\n}\n";
    const DeviceSet set = test::devices();
    const Graph graph = test::relay(text, set);
    QCOMPARE(graph.size(), std::size_t(kLength + 1));
    const Plan plan = planDevices(graph, set, PlanOptions{});
    QVERIFY(plan.copies.empty());
}

void TestPlanner::memoryCapacityExceededIsAConflict() {
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda:mem=200");
    const Graph graph = test::relay(
        program("def @main(%x: $T, %y: $T) { %0 = add(%x, %y); nn.relu(%0) }").toStdString(), set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    QCOMPARE(test::describeConflicts(plan), QString("memory-capacity"));
    QVERIFY2(plan.conflicts[0].message.find("'gpu' needs 560 B but has 200 B") != std::string::npos,
             plan.conflicts[0].message.c_str());
}

void TestPlanner::noDevicesGivesAnEmptyPlan() {
    const Plan plan = planDevices(Graph(), DeviceSet(), PlanOptions{});
    QVERIFY(plan.devices.empty());
    QVERIFY(plan.conflicts.empty());
}

QTEST_APPLESS_MAIN(TestPlanner)
#include "tst_planner.moc"
