// `placement-explorer [MODEL] [--screenshot FILE.png] [--devices ...] [--pin ...] [--rule ...]
// [--fallback ...] [--mode ...]`: the desktop GUI.
#include "gui/HostsRun.h"
#include "gui/MainWindow.h"
#include "gui/ModelOpener.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/WorkspaceController.h"
#include "views/LayoutController.h"

#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/PlacementDocument.h"
#include "views/SceneDigest.h"

#include "session/PlanOptionText.h"
#include "session/Session.h"

#include <QApplication>
#include <QCheckBox>
#include <QCommandLineParser>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QIcon>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QLocale>
#include <QSettings>
#include <QSpinBox>
#include <QTimer>
#include <QTranslator>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace placer;

namespace {

bool hasDisplay() {
    return std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY") ||
           std::getenv("QT_QPA_PLATFORM");
}

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--screenshot" || arg.rfind("--screenshot=", 0) == 0)
            return true;
    }
    return false;
}

bool wantsHelp(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h" || arg == "--version")
            return true;
    }
    return false;
}

int fail(const QString& message) {
    std::fprintf(stderr, "placement-explorer: %s\n", qPrintable(message));
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    if (!hasDisplay()) {
        if (wantsScreenshot(argc, argv) || wantsHelp(argc, argv)) {
            qputenv("QT_QPA_PLATFORM", "offscreen"); // a screenshot needs no screen
        } else {
            std::fprintf(stderr, "placement-explorer: there is no display (neither DISPLAY nor "
                                 "WAYLAND_DISPLAY is set).\n"
                                 "  Run it in a desktop session, under a virtual X server "
                                 "(xvfb-run placement-explorer ...),\n"
                                 "  or render the window to a file without a display:\n"
                                 "    placement-explorer MODEL --screenshot window.png\n");
            return 1;
        }
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Placement Explorer"));
    QApplication::setOrganizationName(QStringLiteral("placement-explorer"));
    QApplication::setApplicationVersion(QStringLiteral(PLACER_VERSION_TEXT));

    // The language: the one chosen in View ▸ Language, else the system's.
    const QString chosen = QSettings().value(QStringLiteral("language")).toString();
    const QLocale locale = chosen.isEmpty() ? QLocale() : QLocale(chosen);
    // Languages without a translation (and the C locale) get English, whose file spells out
    // plurals ("2 copies" for "%n copy(ies)").
    // The installed translations (PREFIX/share/placement-explorer/translations) first, so that
    // one can be updated without rebuilding; then those built into the program.
    QTranslator translator;
    const QString installed = QCoreApplication::applicationDirPath() +
                              QStringLiteral("/../share/placement-explorer/translations");
    bool translated = false;
    for (const QString& folder : {installed, QStringLiteral(":/i18n")}) {
        if (translator.load(locale, QStringLiteral("placement_explorer"), QStringLiteral("_"),
                            folder)) {
            translated = true;
            break;
        }
    }
    if (translated ||
        translator.load(QStringLiteral("placement_explorer_en"), QStringLiteral(":/i18n")))
        QApplication::installTranslator(&translator);
    // Qt's own dialogs (file dialogs, message boxes) in the same language, where Qt has it.
    QTranslator qtTranslator;
    if (qtTranslator.load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(&qtTranslator);
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/placement-explorer.svg")));
    // The desktop entry (resources/desktop), for the window's icon and grouping under Wayland.
    QGuiApplication::setDesktopFileName(QStringLiteral("placement-explorer"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate(
        "main", "Decide where each operator of a dataflow graph runs on a multi-device machine."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("model"),
        QApplication::translate("main",
                                "A Relay, ONNX or JSON graph (default: the bundled example)."));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main", "Write a PNG of the main window and exit."),
        QStringLiteral("file"));
    // The plan options are placer's, parsed by the session's one parser (session/PlanOptionText.h).
    const std::pair<const char*, const char*> planOptions[] = {
        {"format", QT_TRANSLATE_NOOP("main", "Input format: relay, json, onnx or auto.")},
        {"devices", QT_TRANSLATE_NOOP("main", "Virtual devices, NAME:KIND[:mem=SIZE],...")},
        {"default", QT_TRANSLATE_NOOP("main", "Where unconstrained work goes.")},
        {"host", QT_TRANSLATE_NOOP("main", "Where host-only ops run.")},
        {"pin", QT_TRANSLATE_NOOP("main", "Pin NODE=DEVICE (repeatable).")},
        {"pin-fixed", QT_TRANSLATE_NOOP("main", "Pin NODE=DEVICE, result included (repeatable).")},
        {"rule", QT_TRANSLATE_NOOP("main", "Op rule OP=DEVICE (repeatable).")},
        {"fallback", QT_TRANSLATE_NOOP("main", "Fallback device for ops no rule covers.")},
        {"split",
         QT_TRANSLATE_NOOP("main", "Split NODES=DEV[:SHARE],... on the batch (repeatable).")},
        {"shard", QT_TRANSLATE_NOOP("main", "Shard the ops NODES=DEV[:SHARE],... inside, their "
                                            "weights cut across the devices (repeatable).")},
        {"mode", QT_TRANSLATE_NOOP("main", "Planner mode: demand, unify or auto.")},
        {"constants",
         QT_TRANSLATE_NOOP("main", "Constants on several devices: replicate or copy.")},
        {"micro-batches",
         QT_TRANSLATE_NOOP("main", "Pipeline the plan in M micro-batches of the batch.")},
        {"stream", QT_TRANSLATE_NOOP("main", "Throughput mode: N batches back to back through the "
                                             "pipeline.")},
        {"machine", QT_TRANSLATE_NOOP("main", "Plan for the machine a machine file describes: its "
                                              "devices, costed by its rates.")}};
    QList<QCommandLineOption> planCommandOptions;
    for (const auto& [name, description] : planOptions)
        planCommandOptions.append(QCommandLineOption(QString::fromLatin1(name),
                                                     QApplication::translate("main", description),
                                                     QStringLiteral("value")));
    parser.addOptions(planCommandOptions);
    const QCommandLineOption runFirst(
        QStringLiteral("run"),
        QApplication::translate(
            "main", "Run the plan before the screenshot: cuda devices on their GPU where this "
                    "machine has it, the others on the host and virtual CPUs."));
    const QCommandLineOption adaptOption(
        QStringLiteral("adapt"),
        QApplication::translate("main",
                                "With --run or --generate: re-place the work between iterations "
                                "(or steps) when a device stays slower or faster than assumed, "
                                "as the Run panel's Adapt does."));
    const QCommandLineOption iterationsOption(
        QStringLiteral("iterations"),
        QApplication::translate("main", "With --run: measured iterations (default 10)."),
        QStringLiteral("N"));
    const QCommandLineOption collapse(
        QStringLiteral("collapse"),
        QApplication::translate("main", "Collapse the top-level name scopes into groups."));
    const QCommandLineOption expand(
        QStringList{QStringLiteral("expand")},
        QApplication::translate("main",
                                "Open this collapsed name scope as a frame (repeatable; with "
                                "--screenshot)."),
        QStringLiteral("scope"));
    const QCommandLineOption runOnHosts(
        QStringLiteral("run-on-hosts"),
        QApplication::translate("main",
                                "Run the plan under mpirun on N ranks of this machine before the "
                                "screenshot, the devices on the ranks Run ▸ Run on Hosts "
                                "proposes."),
        QStringLiteral("N"));
    const QCommandLineOption hostsDialog(
        QStringLiteral("hosts-dialog"),
        QApplication::translate("main",
                                "Make the screenshot of Run ▸ Run on Hosts as it opens for N "
                                "ranks of this machine, its devices on the ranks it proposes; "
                                "nothing runs."),
        QStringLiteral("N"));
    const QCommandLineOption generateFirst(
        QStringLiteral("generate"),
        QApplication::translate("main",
                                "Generate from the plan before the screenshot (a decoder with a "
                                "KV cache): the prompt's token ids (1,2,3) or a .npy file."),
        QStringLiteral("prompt"));
    const QCommandLineOption profileOption(
        QStringLiteral("profile"),
        QApplication::translate("main",
                                "Put a profile made elsewhere (ONNX Runtime's JSON) on the graph "
                                "once it is open, as File ▸ Import Profile… does."),
        QStringLiteral("file"));
    parser.addOptions({screenshot, runFirst, adaptOption, iterationsOption, runOnHosts, hostsDialog,
                       collapse, expand, generateFirst, profileOption});
    parser.process(app);

    gui::MainWindow window;
    const QStringList positional = parser.positionalArguments();
    // Plan options as placer takes them; the values of each option in the order given.
    ModelSource source;
    PlanRequest request;
    for (const QCommandLineOption& option : planCommandOptions) {
        const std::string name = option.names().front().toStdString();
        for (const QString& value : parser.values(option)) {
            if (auto problem = takePlanOption(name, value.toStdString(), &source, &request))
                return fail(QString::fromStdString(*problem));
        }
    }
    const bool customised = std::any_of(planCommandOptions.begin(), planCommandOptions.end(),
                                        [&](const auto& option) { return parser.isSet(option); });
    if (positional.isEmpty() && !customised) {
        if (!window.opener()->openExample())
            return fail(QStringLiteral("cannot open the bundled example"));
    } else {
        if (positional.isEmpty()) { // the bundled example, with the options given
            QFile example(QStringLiteral(":/examples/split_residual_block.relay"));
            if (!example.open(QIODevice::ReadOnly))
                return fail(QStringLiteral("cannot open the bundled example"));
            source.text = example.readAll().toStdString();
            source.path = "split_residual_block.relay";
        } else {
            source.path = positional.front().toStdString();
        }
        Session session;
        auto planned = session.open(source, request);
        if (!planned)
            return fail(QString::fromStdString(planned.error().toString()));
        for (const std::string& warning : planned.value().warnings)
            std::fprintf(stderr, "placement-explorer: warning: %s\n", warning.c_str());
        if (request.machine)
            window.setMachine(request.machine);
        window.document()->setModel(std::move(planned.value().model),
                                    QString::fromStdString(source.path), source.inputShapes);
        window.document()->setOptions(request.options);
    }

    if (parser.isSet(screenshot)) {
        window.resize(1400, 900);
        window.show();
        window.layout()->layoutNow();
        QApplication::processEvents();
        if (parser.isSet(collapse)) {
            window.layout()->collapseAll();
            window.layout()->layoutNow();
        }
        for (const QString& scope : parser.values(expand)) {
            if (!window.layout()->scene()->collapsed().count(scope.toStdString()))
                return fail(
                    QStringLiteral("--expand %1: no collapsed name scope of that name").arg(scope));
            window.layout()->expand(scope.toStdString());
            window.layout()->layoutNow();
        }
        if (parser.isSet(runFirst)) {
            QEventLoop loop;
            QObject::connect(window.runController(), &gui::RunController::finished, &loop,
                             &QEventLoop::quit);
            window.runPanel()->adapt()->setChecked(parser.isSet(adaptOption));
            if (parser.isSet(iterationsOption))
                window.runPanel()->iterations()->setValue(parser.value(iterationsOption).toInt());
            window.runPanel()->start();
            if (window.runController()->isRunning())
                loop.exec();
        }
        if (parser.isSet(generateFirst)) {
            QEventLoop loop;
            QObject::connect(window.runController(), &gui::RunController::generated, &loop,
                             &QEventLoop::quit);
            window.runPanel()->adapt()->setChecked(parser.isSet(adaptOption));
            window.runPanel()->prompt()->setText(parser.value(generateFirst));
            window.runPanel()->startGeneration();
            if (window.runController()->isRunning())
                loop.exec();
            if (!window.runController()->generation())
                return fail(window.runController()->error());
        }
        if (parser.isSet(runOnHosts)) {
            gui::HostsDialog hosts(window.document()->devices());
            hosts.ranks()->setValue(parser.value(runOnHosts).toInt());
            QEventLoop loop;
            window.startHostsRun(hosts.request());
            gui::HostsRunner* runner = window.hostsRunner();
            QString failure;
            QObject::connect(runner, &gui::HostsRunner::finished, &loop, &QEventLoop::quit);
            QObject::connect(runner, &gui::HostsRunner::failed, &loop, [&](const QString& message) {
                failure = message;
                loop.quit();
            });
            if (runner->running())
                loop.exec();
            if (!failure.isEmpty())
                return fail(failure);
        }
        if (parser.isSet(profileOption) && !window.importProfile(parser.value(profileOption)))
            return fail(QStringLiteral("cannot import ") + parser.value(profileOption));
        if (!parser.isSet(expand)) // an opened group is shown where it is
            window.view()->fitAll();
        QApplication::processEvents();
        const QString file = parser.value(screenshot);
        // The file, its size and the digest of what it shows (scripts/screenshots.sh --check).
        auto save = [&](QWidget* shown, const QGraphicsScene* scene) {
            const QPixmap image = shown->grab();
            if (!image.save(file))
                return fail(QStringLiteral("cannot write ") + file);
            std::printf("%s %dx%d scene %s\n", qPrintable(file), image.width(), image.height(),
                        qPrintable(views::sceneDigest(shown, scene)));
            // What the digest is of, one line each, where PLACER_SCENE_LINES names a file.
            if (const QString lines = qEnvironmentVariable("PLACER_SCENE_LINES");
                !lines.isEmpty()) {
                QFile out(lines);
                if (out.open(QIODevice::WriteOnly | QIODevice::Text))
                    out.write(views::sceneLines(shown, scene).join(QLatin1Char('\n')).toUtf8());
            }
            return 0;
        };
        if (parser.isSet(hostsDialog)) {
            gui::HostsDialog hosts(window.document()->devices(), &window);
            hosts.ranks()->setValue(parser.value(hostsDialog).toInt());
            hosts.show();
            QApplication::processEvents();
            return save(&hosts, nullptr);
        }
        return save(&window, window.view()->scene());
    }
    window.show();
    if (parser.isSet(profileOption)) {
        const QString profile = parser.value(profileOption);
        QTimer::singleShot(0, &window, [&window, profile] { window.importProfile(profile); });
    }
    // After an unclean exit, the unsaved edits kept as drafts are offered back.
    QTimer::singleShot(0, &window, [&window] { window.workspace()->offerAbandonedDrafts(); });
    return app.exec();
}
