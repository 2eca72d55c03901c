// ONNX Runtime's profiles on a model's graph (io/ProfileImport.h), on profiles onnxruntime-node
// wrote for committed models (tests/models/profiles, scripts/ort_profile.js): names as ONNX
// Runtime gives them matched to the model's nodes, fused nodes mapped back to their members,
// Loop bodies added to their Loop, what is no node of the model said with why, and bad input
// refused with a sentence.
#include "io/ProfileImport.h"
#include "io/TextFile.h"
#include "session/Session.h"

#include <QTemporaryDir>
#include <QtTest>

#include <set>
#include <string>

using namespace placer;

namespace {

std::string sourcePath(const std::string& relative) {
    return std::string(PLACER_SOURCE_DIR) + "/" + relative;
}

/// The model as the session reads it (as `placer profile import` does).
Graph model(const std::string& name) {
    const QTemporaryDir dir;
    Session session(SessionOptions{dir.filePath("workspace.db").toStdString()});
    ModelSource source;
    source.path = sourcePath("resources/models/" + name + ".onnx");
    auto loaded = session.load(source);
    if (!loaded)
        qFatal("%s", loaded.error().toString().c_str());
    return std::move(loaded.value().graph);
}

std::string profile(const std::string& name) {
    auto text = readTextFile(sourcePath("tests/models/profiles/" + name));
    if (!text)
        qFatal("%s", text.error().toString().c_str());
    return text.take();
}

const ImportedTime* timeOf(const Graph& graph, const ProfileImport& imported,
                           const std::string& node) {
    const auto id = graph.find(node);
    return id ? imported.timeOf(*id) : nullptr;
}

} // namespace

class TestProfileImport : public QObject {
    Q_OBJECT

private slots:
    /// ONNX Runtime with its optimisations (NCHWc convolutions named after their activation's
    /// output, fused activations and residual adds, layout changes it inserts): every compute
    /// node of the ResNet has a time, the convolutions' activations as their members; the
    /// layout changes are no node of the model, and say so.
    void optimisedResNetMapsBackToItsNodes() {
        const Graph graph = model("tiny_resnet");
        auto imported = importOnnxRuntimeProfile(graph, profile("tiny_resnet.ort.json"),
                                                 "tiny_resnet.ort.json");
        QVERIFY2(imported, imported ? "" : imported.error().toString().c_str());
        const ProfileImport& p = imported.value();
        QCOMPARE(p.runs, 3);
        QCOMPARE(p.nodesWithTimes(), p.computeNodes);
        QVERIFY(p.missing.empty());
        QVERIFY(p.warnings.empty());
        const ImportedTime* stem = timeOf(graph, p, "/stem/stem.0/Conv");
        QVERIFY(stem);
        QCOMPARE(stem->provider, std::string("CPUExecutionProvider"));
        QCOMPARE(stem->op, std::string("Conv"));
        QCOMPARE(stem->event, std::string("/stem/stem.2/Relu_output_0_nchwc"));
        QCOMPARE(stem->events, 3);
        QVERIFY(stem->medianMicros > 0);
        std::set<std::string> members;
        for (const NodeId member : stem->fused)
            members.insert(graph.node(member).name);
        QVERIFY(members.count("/stem/stem.2/Relu"));
        // A convolution that ran with the residual add and the activation after it.
        bool residual = false;
        for (const ImportedTime& time : p.times) {
            for (const NodeId member : time.fused)
                residual = residual || graph.node(member).name == "/layer2/Add";
        }
        QVERIFY(residual);
        QVERIFY(!p.unmatchedEvents.empty());
        for (const auto& event : p.unmatchedEvents) {
            QCOMPARE(event.op.rfind("Reorder", 0), std::size_t{0});
            QVERIFY(event.why.find("layout") != std::string::npos);
        }
        QCOMPARE(p.matchedEvents + 3 * static_cast<int>(p.unmatchedEvents.size()), p.events);
        const Json json = profileImportJson(graph, p);
        QCOMPARE(json.find("node_match_rate")->asDouble(), 1.0);
        QCOMPARE(json.find("nodes")->size(), p.times.size());
        const std::string summary = profileImportSummary(graph, p);
        QVERIFY(summary.find("25 of 25 compute nodes have a time") != std::string::npos);
    }

    /// Without ONNX Runtime's optimisations every event is a node of the model, by name.
    void unoptimisedProfileMatchesEveryEvent() {
        const Graph graph = model("tiny_resnet");
        auto imported = importOnnxRuntimeProfile(graph, profile("tiny_resnet.ort-unoptimized.json"),
                                                 "tiny_resnet.ort-unoptimized");
        QVERIFY2(imported, imported ? "" : imported.error().toString().c_str());
        // The Identity nodes PyTorch's export puts before weights are taken out as placer reads
        // the model: those events alone are no node of it, and say why.
        int identities = 0;
        for (const auto& event : imported.value().unmatchedEvents) {
            QCOMPARE(event.op, std::string("Identity"));
            QVERIFY(event.why.find("Identity") != std::string::npos);
            ++identities;
        }
        QCOMPARE(imported.value().matchedEvents + 3 * identities, imported.value().events);
        QCOMPARE(imported.value().nodesWithTimes(), imported.value().computeNodes);
        for (const ImportedTime& time : imported.value().times) {
            QVERIFY(time.fused.empty());
            QCOMPARE(time.event, graph.node(time.node).name);
        }
    }

    /// A transformer: MatMul+Add run as Gemm under /MatMulAddFusion, scaled products as
    /// FusedMatMul under /MatMulScaleFusion/, reshapes renamed _new_reshape. The normalisations
    /// and GELUs ONNX Runtime fused and named by their op alone are not matched (their count does
    /// not split the model's nodes without a time), and the import says how little matched.
    void transformerFusionsAndWhatCannotBeMatched() {
        const Graph graph = model("tiny_encoder");
        auto imported = importOnnxRuntimeProfile(graph, profile("tiny_encoder.ort.json"),
                                                 "tiny_encoder.ort.json");
        QVERIFY2(imported, imported ? "" : imported.error().toString().c_str());
        const ProfileImport& p = imported.value();
        const ImportedTime* qkv = timeOf(graph, p, "/layers/layers.0/qkv/MatMul");
        QVERIFY(qkv);
        QCOMPARE(qkv->op, std::string("Gemm"));
        QCOMPARE(qkv->fused.size(), std::size_t{1});
        QCOMPARE(graph.node(qkv->fused[0]).op->name, std::string("Add"));
        const ImportedTime* scaled = timeOf(graph, p, "/layers/layers.0/MatMul");
        QVERIFY(scaled);
        QCOMPARE(scaled->op, std::string("FusedMatMul"));
        QVERIFY(timeOf(graph, p, "/layers/layers.0/Reshape_3"));
        bool gelu = false;
        for (const auto& event : p.unmatchedEvents)
            gelu = gelu || (event.op == "Gelu" && event.why.find("by order") != std::string::npos);
        QVERIFY(gelu);
        QCOMPARE(p.warnings.size(), std::size_t{1});
        QVERIFY(p.warnings[0].find("compute nodes have a time") != std::string::npos);
    }

    /// The nodes of a Loop's body add their time to the Loop, every iteration of every run (and
    /// an If's branch to the If).
    void loopBodiesAddToTheirLoop() {
        const Graph graph = model("tiny_recurrent");
        auto imported = importOnnxRuntimeProfile(graph, profile("tiny_recurrent.ort.json"),
                                                 "tiny_recurrent.ort.json");
        QVERIFY2(imported, imported ? "" : imported.error().toString().c_str());
        const ProfileImport& p = imported.value();
        QCOMPARE(p.matchedEvents, p.events);
        const ImportedTime* loop = nullptr;
        for (const ImportedTime& time : p.times) {
            if (graph.node(time.node).op->name == "Loop")
                loop = &time;
        }
        QVERIFY(loop);
        QVERIFY2(loop->events > 3 * 2, // several body nodes, several iterations, three runs
                 qPrintable(QString::fromStdString(graph.node(loop->node).name) + " " +
                            QString::number(loop->events)));
    }

    /// Bad input: not JSON (its line and column), JSON that is no profile, a profile without
    /// node events, and another model's profile each get a sentence; nothing aborts.
    void badProfilesAreRefusedWithASentence_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("expected");
        const std::string whole = profile("tiny_resnet.ort.json");
        QTest::newRow("truncated")
            << QString::fromStdString(whole.substr(0, whole.size() / 2)) << "tiny_resnet"
            << "not JSON";
        QTest::newRow("an object") << "{\"nodes\": []}"
                                   << "tiny_resnet"
                                   << "not a profile";
        QTest::newRow("no node events")
            << "[{\"cat\":\"Session\",\"name\":\"model_run\",\"dur\":5,\"ts\":1}]"
            << "tiny_resnet"
            << "no node events";
        QTest::newRow("another model's")
            << QString::fromStdString(profile("tiny_recurrent.ort.json")) << "tiny_resnet"
            << "another model";
        QTest::newRow("empty") << ""
                               << "tiny_resnet"
                               << "not JSON";
    }
    void badProfilesAreRefusedWithASentence() {
        QFETCH(QString, text);
        QFETCH(QString, model);
        QFETCH(QString, expected);
        const Graph graph = ::model(model.toStdString());
        auto imported = importOnnxRuntimeProfile(graph, text.toStdString(), "bad.json");
        QVERIFY(!imported);
        const std::string message = imported.error().toString();
        QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
        QVERIFY2(message.find("bad.json") != std::string::npos, message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProfileImport)
#include "tst_profileimport.moc"
