// Mutated inputs never crash a reader: every mutation either reads (and then plans) or gives an
// error naming the file, with a line and column, and a sentence.
#include "io/JsonGraph.h"
#include "io/ModelLoader.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"

#include <QFile>
#include <QTest>

#include <random>

using namespace placer;

namespace {

constexpr int kMutations = 3000;

std::string readExample(const char* name) {
    QFile file(QString(PLACER_SOURCE_DIR "/resources/examples/") + name);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot open example %s", name);
    return file.readAll().toStdString();
}

/// Deletes, inserts, duplicates or replaces a few bytes, favouring the characters the grammars
/// care about.
std::string mutate(std::string text, std::mt19937& rng) {
    static const std::string kAlphabet = "()[]{},;:=.%@\"#/*-0123456789aefx\n \\\x01\xff";
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
        const std::size_t at = rng() % text.size();
        switch (rng() % 4) {
        case 0:
            text.erase(at, 1 + rng() % 8);
            break;
        case 1:
            text.insert(at, 1, kAlphabet[rng() % kAlphabet.size()]);
            break;
        case 2:
            text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 16));
            break;
        default:
            text[at] = kAlphabet[rng() % kAlphabet.size()];
            break;
        }
    }
    return text;
}

} // namespace

class TestReaderFuzz : public QObject {
    Q_OBJECT

private slots:
    void mutations_data();
    void mutations();
};

void TestReaderFuzz::mutations_data() {
    QTest::addColumn<QString>("example");
    QTest::addColumn<QString>("fileName");
    QTest::newRow("relay-shared-input") << "shared_input.relay"
                                        << "m.relay";
    QTest::newRow("relay-residual-block") << "residual_block.relay"
                                          << "m.relay";
    QTest::newRow("json-graph") << ""
                                << "m.json";
    QTest::newRow("onnx-inception") << "../models/tiny_inception.onnx"
                                    << "m.onnx";
}

void TestReaderFuzz::mutations() {
    QFETCH(QString, example);
    QFETCH(QString, fileName);
    std::string original;
    if (!example.isEmpty()) {
        original = readExample(example.toUtf8().constData());
    } else {
        // A planned JSON graph of the residual block with a pin: most fields of the format.
        auto model = loadModelText(readExample("residual_block.relay"), "r.relay",
                                   GraphFormat::Relay, std::nullopt);
        QVERIFY(model);
        Graph& graph = model.value().graph;
        graph.node(*graph.find("%9")).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
        const DeviceSet& set = model.value().devices;
        original =
            writeJsonGraph(applyPlan(graph, set, planDevices(graph, set, PlanOptions{})), set)
                .dump();
    }
    std::mt19937 rng(7);
    int read = 0, rejected = 0;
    for (int i = 0; i < kMutations; ++i) {
        const std::string text = mutate(original, rng);
        auto model = loadModelText(text, fileName.toStdString(), GraphFormat::Auto, std::nullopt);
        if (!model) {
            const SourceError& error = model.error();
            QVERIFY2(error.file == fileName.toStdString(), error.toString().c_str());
            // Text formats point at a line and column; a binary ONNX file names the node or
            // tensor in the message instead.
            if (!fileName.endsWith(".onnx"))
                QVERIFY2(error.line > 0 && error.column > 0, error.toString().c_str());
            QVERIFY2(!error.message.empty(), "an error says what is wrong");
            ++rejected;
            continue;
        }
        ++read;
        const Plan plan = planDevices(model.value().graph, model.value().devices, PlanOptions{});
        QCOMPARE(plan.devices.size(), model.value().graph.size());
    }
    qInfo("%d mutations read, %d rejected with a located error", read, rejected);
    QVERIFY(rejected > 0);
}

QTEST_APPLESS_MAIN(TestReaderFuzz)
#include "tst_readerfuzz.moc"
