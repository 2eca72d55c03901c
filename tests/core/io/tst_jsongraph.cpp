// The JSON graph format: round trips, devices carried by the file, and located errors.
#include "PlanTestUtil.h"

#include "io/JsonGraph.h"
#include "io/ModelLoader.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"

#include <QTest>

using namespace placer;

namespace {

const char* kGraph = R"({
  "format": "placer-graph",
  "version": 1,
  "name": "tiny",
  "devices": [{"name": "host", "kind": "cpu"}, {"name": "accel", "kind": "cuda", "memory": 1048576}],
  "default": "accel",
  "nodes": [
    {"name": "x", "op": "parameter", "outputs": [{"shape": [2, 4], "dtype": "float32"}]},
    {"name": "k", "op": "constant", "outputs": [{"shape": [], "dtype": "float32"}], "value": 0.5},
    {"name": "halves", "op": "split", "inputs": ["x"], "attrs": {"indices_or_sections": 2, "axis": 1}},
    {"name": "scaled", "op": "multiply", "inputs": ["halves:0", "k"], "pin": {"device": "host"}},
    {"name": "joined", "op": "concatenate", "inputs": ["scaled", "halves:1"], "attrs": {"axis": 1}}
  ],
  "outputs": ["joined"]
})";

} // namespace

class TestJsonGraph : public QObject {
    Q_OBJECT

private slots:
    void readsDevicesAndNodes();
    void plannedGraphRoundTrips();
    void errors_data();
    void errors();
};

void TestJsonGraph::readsDevicesAndNodes() {
    auto model = loadModelText(kGraph, "tiny.json", GraphFormat::Auto, std::nullopt);
    QVERIFY2(model, model ? "" : model.error().toString().c_str());
    const DeviceSet& set = model.value().devices;
    QCOMPARE(set.namesList(), std::string("host, accel"));
    QCOMPARE(set.defaultDevice(), DeviceId(1));
    QCOMPARE(set.hostDevice(), DeviceId(0));
    QCOMPARE(set[DeviceId(1)].memoryCapacity.value(), std::int64_t{1048576});
    const Graph& g = model.value().graph;
    QCOMPARE(g.size(), std::size_t(5));
    QCOMPARE(g.node(*g.find("joined")).outputs[0].shape, (std::vector<std::int64_t>{2, 4}));
    QCOMPARE(g.node(*g.find("scaled")).pin.device, DeviceId(0));
    const Plan plan = planDevices(g, set, PlanOptions{});
    QCOMPARE(test::describeDevices(g, set, plan),
             QString("x=accel k=host halves=accel scaled=host joined=accel"));
}

void TestJsonGraph::plannedGraphRoundTrips() {
    auto model = loadModelText(kGraph, "tiny.json", GraphFormat::Json, std::nullopt);
    QVERIFY(model);
    const DeviceSet& set = model.value().devices;
    const Graph& g = model.value().graph;
    const Graph planned = applyPlan(g, set, planDevices(g, set, PlanOptions{}));
    const std::string written = writeJsonGraph(planned, set).dump();
    auto reread = loadModelText(written, "planned.json", GraphFormat::Auto, std::nullopt);
    QVERIFY2(reread, reread ? "" : reread.error().toString().c_str());
    QCOMPARE(writeJsonGraph(reread.value().graph, reread.value().devices).dump(), written);
    QVERIFY(QString::fromStdString(written).contains("\"inserted\": true"));
    QVERIFY(QString::fromStdString(written).contains("\"value\": 0.5"));
}

void TestJsonGraph::errors_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("line");
    QTest::newRow("unknown-op") << "\"op\": \"multiply\""
                                << "\"op\": \"multiplyy\""
                                << "node 'scaled': unknown operator 'multiplyy'" << 11;
    QTest::newRow("unknown-input") << "[\"halves:0\", \"k\"]"
                                   << "[\"halves:0\", \"kk\"]"
                                   << "unknown value \"kk\"" << 11;
    QTest::newRow("output-out-of-range") << "\"halves:1\""
                                         << "\"halves:5\""
                                         << "names output 5 of halves, which has 2" << 12;
    QTest::newRow("unknown-pin-device")
        << "{\"device\": \"host\"}"
        << "{\"device\": \"tpu\"}"
        << "names unknown device 'tpu' (devices: host, accel)" << 11;
    QTest::newRow("bad-shape") << "[2, 4]"
                               << "[2, -4]"
                               << "dimensions must be non-negative integers" << 8;
    QTest::newRow("shape-error") << "\"indices_or_sections\": 2"
                                 << "\"indices_or_sections\": 3"
                                 << "node 'halves': split: 4 is not divisible into 3 sections"
                                 << 10;
    QTest::newRow("duplicate-name") << "\"name\": \"k\""
                                    << "\"name\": \"x\""
                                    << "node 'x' is defined twice" << 9;
    QTest::newRow("wrong-format") << "\"placer-graph\""
                                  << "\"other\""
                                  << "\"format\" must be \"placer-graph\"" << 2;
    QTest::newRow("bad-default") << "\"default\": \"accel\""
                                 << "\"default\": \"nope\""
                                 << "\"default\" must name one of the devices" << 6;
    QTest::newRow("truncated") << "\"outputs\": [\"joined\"]\n}"
                               << "\"outputs\": [\"joi"
                               << "unterminated string" << 14;
}

void TestJsonGraph::errors() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, message);
    QFETCH(int, line);
    QString text = QString(kGraph);
    QVERIFY2(text.contains(from), qPrintable(from));
    text.replace(text.indexOf(from), from.size(), to);
    auto model = loadModelText(text.toStdString(), "bad.json", GraphFormat::Auto, std::nullopt);
    QVERIFY2(!model, "expected an error");
    QVERIFY2(QString::fromStdString(model.error().message).contains(message),
             model.error().toString().c_str());
    QCOMPARE(model.error().file, std::string("bad.json"));
    QCOMPARE(model.error().line, line);
    QVERIFY(model.error().column > 0);
}

QTEST_APPLESS_MAIN(TestJsonGraph)
#include "tst_jsongraph.moc"
