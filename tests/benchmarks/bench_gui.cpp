// GUI figures (offscreen): time from opening a graph to the first paint of its layout, the
// final layout's time (dot's up to 2,000 drawn nodes, the layered layout's above), the latency
// from a drop (a pin) to the repainted plan (p50/p95 over 40 drops), and the longest the UI
// thread was blocked while the layout ran in the background, the time from a drop until the
// event loop has shown its prediction, and the frames of a pan and a zoom step. Graphs: the bundled
// example, a 2,000-node Inception-like graph, 5,000- and 50,000-node transformer-like graphs
// (generated here as Relay text), and ResNet-50 from $PLACER_ONNX_MODELS when set. A grouped
// graph also times opening a group (its frame and the top laid out, the other frames kept) and
// closing it. A run from the Run panel against the session's own run of the plan. Last, layout
// quality: the layered layout's edge crossings against dot's on the bundled models, the test
// models, the models in $PLACER_ONNX_MODELS and the generated graphs.
//
//   bench_gui               the full run
//   bench_gui --quick       small graphs only (what CTest runs)
//   bench_gui --keep DIR    also keeps the generated graphs in DIR
//   bench_gui --crossings   the crossings against dot only
//   bench_gui --only TEXT   only the graphs whose label holds TEXT (no crossings); "Run
//                           panel" for the run from the Run panel alone
#include "BenchFailures.h"
#include "ScopedLayers.h"
#include "gui/MainWindow.h"
#include "gui/ModelOpener.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/WorkspaceController.h"
#include "session/Session.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/LayeredLayout.h"
#include "views/LayoutController.h"
#include "views/PlacementDocument.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

using namespace placer;

namespace {

/// Relay text built one binding at a time.
struct RelayText {
    explicit RelayText(const std::string& input) {
        text = "#[version = \"0.0.5\"]\ndef @main(%x: " + input + ") {\n";
    }
    std::string bind(const std::string& expr) {
        const std::string name = "%" + std::to_string(count++);
        text += "  " + name + " = " + expr + ";\n";
        return name;
    }
    std::string finish(const std::string& result) { return text + "  " + result + "\n}\n"; }
    std::string text;
    int count = 0;
};

/// Blocks of four parallel branches (1x1, 3x3, 5x5 as two 3x3, pool) joined by adds.
std::string inceptionLike(int blocks) {
    RelayText r("Tensor[(1, 16, 8, 8), float32]");
    std::string prev = "%x";
    for (int b = 0; b < blocks; ++b) {
        const std::string a = r.bind("nn.relu(" + prev + ")");
        const std::string c2 = r.bind("tanh(" + r.bind("sigmoid(" + prev + ")") + ")");
        const std::string d2 = r.bind("nn.relu(" + r.bind("negative(" + prev + ")") + ")");
        const std::string d3 = r.bind("tanh(" + d2 + ")");
        const std::string e1 =
            r.bind("nn.max_pool2d(" + prev + ", pool_size=[3, 3], padding=[1, 1, 1, 1])");
        const std::string e2 = r.bind("nn.relu(" + e1 + ")");
        const std::string s1 = r.bind("add(" + a + ", " + c2 + ")");
        const std::string s2 = r.bind("add(" + d3 + ", " + e2 + ")");
        prev = r.bind("add(" + s1 + ", " + s2 + ")");
    }
    return r.finish(prev);
}

/// Layers of attention-like and feed-forward blocks with residual skips.
std::string transformerLike(int layers) {
    RelayText r("Tensor[(16, 64), float32]");
    std::string prev = "%x";
    for (int l = 0; l < layers; ++l) {
        const std::string q = r.bind("tanh(" + prev + ")");
        const std::string k = r.bind("sigmoid(" + prev + ")");
        const std::string v = r.bind("nn.relu(" + prev + ")");
        const std::string p =
            r.bind("nn.softmax(" + r.bind("multiply(" + q + ", " + k + ")") + ")");
        const std::string o = r.bind("negative(" + r.bind("multiply(" + p + ", " + v + ")") + ")");
        const std::string r1 = r.bind("add(" + prev + ", " + o + ")");
        const std::string f1 = r.bind("nn.relu(" + r.bind("tanh(" + r1 + ")") + ")");
        const std::string f3 = r.bind("negative(" + r.bind("sigmoid(" + f1 + ")") + ")");
        prev = r.bind("tanh(" + r.bind("add(" + r1 + ", " + f3 + ")") + ")");
    }
    return r.finish(prev);
}

/// A random layered DAG: `n` ops in ranks of `width`, each reading one op of the rank above
/// (every op is read) and, one in two, another op up to five ranks above; the last rank summed.
std::string randomLayered(int n, int width, unsigned seed) {
    std::mt19937 rng(seed);
    RelayText r("Tensor[(16, 64), float32]");
    const char* unary[] = {"tanh", "sigmoid", "nn.relu", "negative"};
    std::vector<std::vector<std::string>> ranks;
    for (int at = 0; at < n;) {
        std::vector<std::string> rank;
        std::vector<int> order(static_cast<std::size_t>(width));
        for (int i = 0; i < width; ++i)
            order[static_cast<std::size_t>(i)] = i;
        std::shuffle(order.begin(), order.end(), rng);
        for (int i = 0; i < width && at < n; ++i, ++at) {
            if (ranks.empty()) {
                rank.push_back(r.bind(std::string(unary[rng() % 4]) + "(%x)"));
                continue;
            }
            const std::string& first = ranks.back()[static_cast<std::size_t>(
                order[static_cast<std::size_t>(i)] % static_cast<int>(ranks.back().size()))];
            if (rng() % 2 == 0) {
                rank.push_back(r.bind(std::string(unary[rng() % 4]) + "(" + first + ")"));
                continue;
            }
            const auto& above =
                ranks[ranks.size() - 1 - std::min<std::size_t>(rng() % 5, ranks.size() - 1)];
            rank.push_back(r.bind("add(" + first + ", " + above[rng() % above.size()] + ")"));
        }
        ranks.push_back(std::move(rank));
    }
    std::string sum = ranks.back().front();
    for (std::size_t i = 1; i < ranks.back().size(); ++i)
        sum = r.bind("add(" + sum + ", " + ranks.back()[i] + ")");
    return r.finish(sum);
}

double percentile(std::vector<double> values, double p) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

/// `flat`: every group expanded first (View > Expand All Groups), as a user who wants the whole
/// graph drawn; the first paint and layout figures are then those of the flat layout.
/// --only TEXT: only the graphs whose label holds TEXT are measured.
QString g_only;

void measure(const QString& label, const QString& path, bool flat = false) {
    if (!g_only.isEmpty() && !label.contains(g_only))
        return;
    gui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    QApplication::processEvents();
    // The UI thread's longest stall while the layout runs: a 5 ms timer's largest gap.
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0, worstGap = 0;
    QTimer heartbeat;
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        worstGap = std::max(worstGap, now - last);
        last = now;
    });
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    QElapsedTimer open;
    open.start();
    last = clock.elapsed();
    heartbeat.start(5);
    if (!window.openFile(path)) {
        std::printf("%-28s cannot open\n", qPrintable(label));
        bench::wrong(label.toStdString() + ": cannot open " + path.toStdString());
        return;
    }
    double firstPaint = -1;
    if (window.scene()->hasItems()) { // a large graph shows a quick layout at once
        window.view()->viewport()->repaint();
        firstPaint = static_cast<double>(open.nsecsElapsed()) / 1e6;
    }
    last = clock.elapsed();
    heartbeat.start(5);
    if (!laidOut.wait(600000)) {
        std::printf("%-28s layout did not finish in 10 minutes\n", qPrintable(label));
        bench::wrong(label.toStdString() + ": the layout did not finish in 10 minutes");
        return;
    }
    if (flat && !window.scene()->collapsed().empty()) {
        open.restart();
        window.layout()->setCollapsedScopes({});
        if (!laidOut.wait(600000))
            return bench::wrong(label.toStdString() + ": the flat layout did not finish");
    }
    heartbeat.stop();
    window.view()->viewport()->repaint();
    const double laidOutAt = static_cast<double>(open.nsecsElapsed()) / 1e6;
    if (firstPaint < 0)
        firstPaint = laidOutAt;
    // Drops: pin a random drawn node to the other device, as a drop does, and repaint.
    const Graph& graph = window.document()->graph();
    // The nodes a drop can pin: drawn, or inside a collapsed group (a drop on a group pins its
    // members; here one at a time).
    std::vector<NodeId> drawn;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        if (window.scene()->nodeItem(NodeId(i)) || window.scene()->inCollapsedGroup(NodeId(i)))
            drawn.push_back(NodeId(i));
    }
    std::mt19937 rng(1);
    std::vector<double> drops, replans, predicted;
    const auto millisSince = [](const QElapsedTimer& t) {
        return static_cast<double>(t.nsecsElapsed()) / 1e6;
    };
    for (int i = 0; i < 40; ++i) {
        const NodeId node = drawn[rng() % drawn.size()];
        QElapsedTimer t;
        t.start();
        window.pinNodes(i % 2 ? QStringLiteral("cpu") : QStringLiteral("gpu"), {node});
        replans.push_back(millisSince(t));
        window.view()->viewport()->repaint();
        drops.push_back(millisSince(t));
        // Then what the event loop does next: the minimap's repaint, and a large graph's
        // deferred prediction (PlacementDocument::kDeferredPrediction) with its timeline.
        while (window.document()->predictionPending())
            QCoreApplication::processEvents();
        QCoreApplication::processEvents();
        predicted.push_back(millisSince(t));
        if (!window.document()->plan().prediction)
            bench::wrong(label.toStdString() + ": a drop's plan has no prediction");
        // The next drop comes when the window is idle (the minimap's overview made again).
        QElapsedTimer idle;
        idle.start();
        while (idle.elapsed() < 60)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    // Frames: the canvas scrolled by 400 pixels, and zoomed in and out a step, each until the
    // event loop has painted everything (the view and its minimap).
    std::vector<double> pans, zooms;
    QScrollBar* bar = window.view()->verticalScrollBar();
    for (int i = 0; i < 20; ++i) {
        QElapsedTimer t;
        t.start();
        bar->setValue(bar->value() + (i < 10 ? 400 : -400));
        QCoreApplication::processEvents();
        pans.push_back(millisSince(t));
    }
    for (int i = 0; i < 20; ++i) {
        QElapsedTimer t;
        t.start();
        if (i % 2)
            window.view()->zoomIn();
        else
            window.view()->zoomOut();
        QCoreApplication::processEvents();
        zooms.push_back(millisSince(t));
    }
    // Opening a closed group (as find does): the time until the canvas shows the node in it.
    double opened = -1;
    for (const NodeId node : drawn) {
        if (!window.scene()->inCollapsedGroup(node))
            continue;
        QSignalSpy relaid(&window, &gui::MainWindow::layoutFinished);
        QElapsedTimer t;
        t.start();
        window.view()->showNode(node);
        if (!relaid.wait(600000) || !window.scene()->nodeItem(node)) {
            bench::wrong(label.toStdString() + ": opening a group did not show its node");
            break;
        }
        window.view()->viewport()->repaint();
        opened = millisSince(t);
        break;
    }
    if (opened >= 0)
        std::printf("%-28s a closed group opened and its node shown in %.0f ms\n",
                    qPrintable(label), opened);
    // Then another group opened (its frame and the top laid out; the first frame kept), and
    // closed again, each until repainted.
    const auto relayout = [&](const auto& change, const char* what) {
        QSignalSpy relaid(window.layout(), &views::LayoutController::finished);
        QSignalSpy said(window.layout(), &views::LayoutController::message);
        QElapsedTimer t;
        t.start();
        change();
        if (!relaid.wait(600000)) {
            bench::wrong(label.toStdString() + ": " + what + " did not finish");
            return;
        }
        window.view()->viewport()->repaint();
        const double millis = millisSince(t);
        const QString message = said.isEmpty() ? QString() : said.last().at(0).toString();
        std::printf("%-28s %s in %.0f ms: %s\n", qPrintable(label), what, millis,
                    qPrintable(message));
    };
    std::string second;
    for (const std::string& scope : window.scene()->collapsed())
        if (second.empty() || scope.size() != second.size())
            second = scope; // one whose nodes' names differ in length from the first's
    if (opened >= 0 && !second.empty()) {
        relayout([&] { window.layout()->expand(second); }, "another group opened");
        relayout([&] { window.layout()->collapse(second); }, "that group closed");
    }
    std::printf("%-28s %6zu nodes: first paint %6.0f ms, final layout shown at %6.0f ms, "
                "drop->repaint p50 %4.1f ms p95 %4.1f ms (of which re-plan and refresh p50 "
                "%4.1f ms), drop->prediction shown p50 %4.1f ms, pan frame p50 %4.1f p95 %4.1f "
                "ms, zoom frame p50 %4.1f p95 %4.1f ms, longest UI stall %4lld ms\n",
                qPrintable(label), graph.size(), firstPaint, laidOutAt, percentile(drops, 0.5),
                percentile(drops, 0.95), percentile(replans, 0.5), percentile(predicted, 0.5),
                percentile(pans, 0.5), percentile(pans, 0.95), percentile(zooms, 0.5),
                percentile(zooms, 0.95), static_cast<long long>(worstGap));
}

/// Edge crossings of the layered layout against dot's on the graph at `path`, laid out as the
/// canvas lays it out flat (views/LayeredLayout.h countCrossings).
void crossings(const QString& label, const QString& path) {
    // Opened as the window opens it (the graph the canvas draws), then laid out flat both ways.
    gui::MainWindow window;
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    if (!window.openFile(path) || !laidOut.wait(600000)) {
        bench::wrong(label.toStdString() + ": cannot open or lay out " + path.toStdString());
        return;
    }
    window.layout()->setCollapsedScopes({});
    if (!laidOut.wait(600000))
        return bench::wrong(label.toStdString() + ": cannot lay out flat");
    const views::LayoutRequest request = window.scene()->layoutRequest();
    const views::LayoutResult dot = views::computeLayout(request);
    const views::LayoutResult layered = views::layeredLayout(request);
    if (!dot.error.isEmpty()) {
        std::printf("%-28s %6zu units: dot failed (%s)\n", qPrintable(label),
                    request.nodeSizes.size(), qPrintable(dot.error));
        return;
    }
    const std::int64_t ofDot = views::countCrossings(request, dot);
    const std::int64_t ofLayered = views::countCrossings(request, layered);
    std::printf("%-28s %6zu units: crossings dot %6lld (%6.2f s), layered %6lld (%6.2f s), "
                "ratio %s\n",
                qPrintable(label), request.nodeSizes.size(), static_cast<long long>(ofDot),
                dot.seconds, static_cast<long long>(ofLayered), layered.seconds,
                ofDot > 0 ? qPrintable(QString::number(double(ofLayered) / double(ofDot), 'f', 2))
                          : (ofLayered == 0 ? "1 (none)" : "- (dot none)"));
}

/// A run from the window's Run panel against the same plan run by the session directly (what
/// placer run does), alternating, in this process: the window must not slow the run it times
/// (its progress bar repainting between a small model's iterations, say). tiny_resnet over two
/// vcpus, the convolutions on one.
void runInWindow(bool quick) {
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    const int iterations = quick ? 50 : 400;
    DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
    devices.chooseDefaults();
    const std::vector<OpRule> rules = {{"Conv", "a"}, {"Relu", "b"}, {"Add", "b"}};
    gui::MainWindow window;
    window.show();
    QString error;
    views::PlacementDocument* document = window.document();
    if (!document->open(model, &error, devices)) {
        bench::wrong("run in the window: " + error.toStdString());
        return;
    }
    PlanOptions options = document->options();
    options.rules = rules;
    document->setOptions(options);
    window.runPanel()->iterations()->setValue(iterations);
    window.runPanel()->warmup()->setValue(5);
    Session session(
        SessionOptions{QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
                           .filePath(QStringLiteral("direct.db"))
                           .toStdString()});
    PlanRequest request;
    request.devices = "a:vcpu,b:vcpu";
    request.options.rules = rules;
    auto opened = session.open(ModelSource{model.toStdString()}, request);
    if (!opened) {
        bench::wrong("run in the window: " + opened.error().message);
        return;
    }
    const auto planned = std::make_shared<const PlannedModel>(opened.take());
    RunRequest direct;
    direct.iterations = iterations;
    direct.warmup = 5;
    direct.reference = false;
    std::vector<double> inWindow, bySession;
    for (int round = 0; round < 3; ++round) {
        QSignalSpy finished(window.runController(), &gui::RunController::finished);
        QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("run")), Qt::LeftButton);
        if (!finished.wait(120000) || !window.runController()->outcome()) {
            bench::wrong("run in the window: " + window.runController()->error().toStdString());
            return;
        }
        const auto& ran = window.runController()->outcome()->result.latencyMicros;
        inWindow.insert(inWindow.end(), ran.begin(), ran.end());
        auto outcome = session.run(planned, direct);
        if (!outcome) {
            bench::wrong("run in the window: the session's run: " + outcome.error().message);
            return;
        }
        const auto& latency = outcome.value()->result.latencyMicros;
        bySession.insert(bySession.end(), latency.begin(), latency.end());
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[v.size() / 2];
    };
    std::printf("\nrun from the Run panel against the session's own run (tiny_resnet on two vcpus, "
                "%d iterations x 3): window %.1f us, session %.1f us median: %.2fx\n",
                iterations, median(inWindow), median(bySession),
                median(inWindow) / std::max(1e-9, median(bySession)));
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    // The benchmark's workspace and settings stay out of the user's.
    QTemporaryDir home;
    qputenv("XDG_DATA_HOME", home.path().toUtf8());
    qputenv("XDG_CONFIG_HOME", home.path().toUtf8());
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("placer-bench"));
    // A fresh layout cache unless asked to reuse it (--cached shows reopening).
    const bool cached = argc > 1 && std::string(argv[argc - 1]) == "--cached";
    if (!cached)
        QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)).removeRecursively();
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    // --keep DIR: the generated graphs are written to DIR and kept, to open them by hand.
    QString keep;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::string(argv[i]) == "--keep")
            keep = QString::fromLocal8Bit(argv[i + 1]);
        if (std::string(argv[i]) == "--only")
            g_only = QString::fromLocal8Bit(argv[i + 1]);
    }
    QTemporaryDir dir;
    auto write = [&](const QString& name, const std::string& text) {
        const QString path =
            keep.isEmpty() ? dir.filePath(name) : keep + QStringLiteral("/") + name;
        QFile file(path);
        file.open(QIODevice::WriteOnly);
        file.write(text.data(), static_cast<qint64>(text.size()));
        return path;
    };
    // --crossings: the layout-quality part only.
    const bool crossingsOnly = std::any_of(
        argv + 1, argv + argc, [](const char* arg) { return std::string(arg) == "--crossings"; });
    if (!crossingsOnly) {
        measure(QStringLiteral("residual block example"),
                QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay"));
        measure(quick ? QStringLiteral("inception-like 220 nodes")
                      : QStringLiteral("inception-like 2,000 nodes"),
                write(QStringLiteral("inception.relay"), inceptionLike(quick ? 20 : 182)));
        measure(quick ? QStringLiteral("transformer-like 280 nodes")
                      : QStringLiteral("transformer-like 5,000 nodes"),
                write(QStringLiteral("transformer.relay"), transformerLike(quick ? 20 : 357)));
        if (!quick) { // the layered layout (dot runs out of memory here)
            measure(QStringLiteral("transformer-like 50,000 nodes"),
                    write(QStringLiteral("transformer50k.relay"), transformerLike(3570)));
            measure(QStringLiteral("transformer-like 50,000, flat"),
                    write(QStringLiteral("transformer50k.relay"), transformerLike(3570)), true);
            measure(QStringLiteral("random layered 5,000 nodes"),
                    write(QStringLiteral("random5k.relay"), randomLayered(5000, 12, 1)));
            measure(QStringLiteral("random layered 50,000 nodes"),
                    write(QStringLiteral("random50k.relay"), randomLayered(50000, 12, 2)));
            measure(QStringLiteral("random layered 50,000, flat"),
                    write(QStringLiteral("random50k.relay"), randomLayered(50000, 12, 2)), true);
        }
        // Name scopes: the canvas opens with them collapsed (LayoutController::startingScopes).
        measure(quick ? QStringLiteral("scoped 4,100 nodes, grouped")
                      : QStringLiteral("scoped 50,000 nodes, grouped"),
                write(QStringLiteral("scoped.json"),
                      test::scopedLayersJson(quick ? 100 : 1220, 41, "/model")));
        if (const char* models = std::getenv("PLACER_ONNX_MODELS"); models && !quick) {
            const QString resnet =
                QString::fromLocal8Bit(models) + QStringLiteral("/resnet50.onnx");
            if (QFile::exists(resnet))
                measure(QStringLiteral("ResNet-50 (ONNX)"), resnet);
        }
    }
    // The run from the Run panel (--only "Run panel" for it alone).
    if (!crossingsOnly &&
        (g_only.isEmpty() || QStringLiteral("run from the Run panel").contains(g_only)))
        runInWindow(quick);
    if (!g_only.isEmpty() && !crossingsOnly)
        return bench::exitCode();
    // Layout quality: the layered layout's crossings against dot's on the bundled and exported
    // models and the generated graphs dot can lay out.
    std::printf("\ncrossings against dot (the layered layout is the canvas's above %zu units)\n",
                views::LayoutController::kLayeredNodes);
    QStringList models;
    for (const char* folder : {"/resources/examples", "/resources/models", "/tests/models"})
        for (const QFileInfo& file :
             QDir(QStringLiteral(PLACER_SOURCE_DIR) + QString::fromLatin1(folder))
                 .entryInfoList({QStringLiteral("*.onnx"), QStringLiteral("*.relay")}, QDir::Files,
                                QDir::Name))
            models << file.filePath();
    if (const char* exported = std::getenv("PLACER_ONNX_MODELS"); exported && !quick)
        for (const QFileInfo& file :
             QDir(QString::fromLocal8Bit(exported))
                 .entryInfoList({QStringLiteral("*.onnx")}, QDir::Files, QDir::Name))
            models << file.filePath();
    for (const QString& model : models)
        crossings(QFileInfo(model).fileName(), model);
    crossings(quick ? QStringLiteral("inception-like 220") : QStringLiteral("inception-like 2,000"),
              write(QStringLiteral("inception.relay"), inceptionLike(quick ? 20 : 182)));
    for (const int n : quick ? std::vector<int>{300} : std::vector<int>{300, 1000, 2000})
        crossings(QStringLiteral("random layered %1").arg(n),
                  write(QStringLiteral("random%1.relay").arg(n), randomLayered(n, 12, 3)));
    crossings(quick ? QStringLiteral("transformer-like 280")
                    : QStringLiteral("transformer-like 5,000"),
              write(QStringLiteral("transformer.relay"), transformerLike(quick ? 20 : 357)));
    return bench::exitCode();
}
