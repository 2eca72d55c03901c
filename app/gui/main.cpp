// `placement-explorer [MODEL] [--screenshot FILE.png] [--devices ...] [--pin ...] [--rule ...]
// [--fallback ...] [--mode ...]`: the desktop GUI.
#include "cli/Backends.h"
#include "gui/MainWindow.h"
#include "gui/RunController.h"

#include "io/ModelLoader.h"
#include "plan/Annotations.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/PlacementDocument.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QEventLoop>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTimer>
#include <QTranslator>

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
    cli::registerBuiltBackends();
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
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

    // The language: the one chosen in View ▸ Language, else the system's.
    const QString chosen = QSettings().value(QStringLiteral("language")).toString();
    const QLocale locale = chosen.isEmpty() ? QLocale() : QLocale(chosen);
    // Languages without a translation (and the C locale) get English, whose file spells out
    // plurals ("2 copies" for "%n copy(ies)").
    QTranslator translator;
    if (translator.load(locale, QStringLiteral("placement_explorer"), QStringLiteral("_"),
                        QStringLiteral(":/i18n")) ||
        translator.load(QStringLiteral("placement_explorer_en"), QStringLiteral(":/i18n")))
        QApplication::installTranslator(&translator);

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
    const QCommandLineOption devices(
        QStringLiteral("devices"),
        QApplication::translate("main", "Virtual devices, NAME:KIND[:mem=SIZE],..."),
        QStringLiteral("list"));
    const QCommandLineOption pin(QStringLiteral("pin"),
                                 QApplication::translate("main", "Pin NODE=DEVICE (repeatable)."),
                                 QStringLiteral("assignment"));
    const QCommandLineOption rule(
        QStringLiteral("rule"), QApplication::translate("main", "Op rule OP=DEVICE (repeatable)."),
        QStringLiteral("assignment"));
    const QCommandLineOption fallback(
        QStringLiteral("fallback"),
        QApplication::translate("main", "Fallback device for ops no rule covers."),
        QStringLiteral("device"));
    const QCommandLineOption mode(QStringLiteral("mode"),
                                  QApplication::translate("main", "Planner mode: demand or unify."),
                                  QStringLiteral("mode"));
    const QCommandLineOption runFirst(
        QStringLiteral("run"),
        QApplication::translate("main", "Run the plan on virtual CPUs before the screenshot."));
    const QCommandLineOption collapse(
        QStringLiteral("collapse"),
        QApplication::translate("main", "Collapse the top-level name scopes into groups."));
    parser.addOptions({screenshot, devices, pin, rule, fallback, mode, runFirst, collapse});
    parser.process(app);

    gui::MainWindow window;
    const QStringList positional = parser.positionalArguments();
    const bool customised = parser.isSet(devices) || parser.isSet(pin) || parser.isSet(rule) ||
                            parser.isSet(fallback) || parser.isSet(mode);
    if (positional.isEmpty() && !customised) {
        if (!window.openExample())
            return fail(QStringLiteral("cannot open the bundled example"));
    } else {
        const QString path = positional.isEmpty()
                                 ? QStringLiteral(":/examples/split_residual_block.relay")
                                 : positional.front();
        std::optional<DeviceSet> set;
        std::string error;
        if (parser.isSet(devices)) {
            set = DeviceSet::parse(parser.value(devices).toStdString(), &error);
            if (!set)
                return fail(QStringLiteral("--devices: ") + QString::fromStdString(error));
        }
        Result<LoadedModel> loaded = SourceError{};
        if (path.startsWith(QLatin1Char(':'))) {
            QFile file(path);
            file.open(QIODevice::ReadOnly);
            loaded = loadModelText(file.readAll().toStdString(), "split_residual_block.relay",
                                   GraphFormat::Auto, set);
        } else {
            loaded = loadModelFile(path.toStdString(), GraphFormat::Auto, set);
        }
        if (!loaded)
            return fail(QString::fromStdString(loaded.error().toString()));
        LoadedModel model = loaded.take();
        std::vector<PinRequest> pins;
        for (const QString& value : parser.values(pin)) {
            PinRequest request;
            if (!splitAssignment(value.toStdString(), &request.nodePattern, &request.device,
                                 &error))
                return fail(QStringLiteral("--pin ") + QString::fromStdString(error));
            pins.push_back(request);
        }
        if (!applyPinRequests(model.graph, model.devices, pins, &error))
            return fail(QString::fromStdString(error));
        std::vector<OpRule> rules;
        for (const QString& value : parser.values(rule)) {
            OpRule r;
            if (!splitAssignment(value.toStdString(), &r.opPattern, &r.device, &error))
                return fail(QStringLiteral("--rule ") + QString::fromStdString(error));
            rules.push_back(r);
        }
        PlanOptions options;
        options.rules = rules;
        options.fallbackDevice = parser.value(fallback).toStdString();
        std::vector<std::string> warnings;
        if (!validateRules(model.graph, model.devices, options, &error, &warnings))
            return fail(QString::fromStdString(error));
        window.document()->setModel(std::move(model), path);
        window.document()->setRules(options.rules, options.fallbackDevice);
        if (parser.isSet(mode)) {
            const QString value = parser.value(mode);
            if (value != QStringLiteral("demand") && value != QStringLiteral("unify"))
                return fail(QStringLiteral("--mode must be demand or unify"));
            window.document()->setMode(value == QStringLiteral("demand") ? PlanMode::Demand
                                                                         : PlanMode::Unify);
        }
    }

    if (parser.isSet(screenshot)) {
        window.resize(1400, 900);
        window.show();
        window.layoutNow();
        QApplication::processEvents();
        if (parser.isSet(collapse)) {
            std::set<std::string> scopes;
            for (const Node& node : window.document()->graph().nodes()) {
                const auto all = views::GraphScene::scopesOf(node.name);
                if (!all.empty())
                    scopes.insert(all.front());
            }
            window.setCollapsedScopes(std::move(scopes));
            window.layoutNow();
        }
        if (parser.isSet(runFirst)) {
            QEventLoop loop;
            QObject::connect(window.runController(), &gui::RunController::finished, &loop,
                             &QEventLoop::quit);
            window.startRun();
            if (window.runController()->isRunning())
                loop.exec();
        }
        window.view()->fitAll();
        QApplication::processEvents();
        const QString file = parser.value(screenshot);
        if (!window.grab().save(file))
            return fail(QStringLiteral("cannot write ") + file);
        std::printf("%s\n", qPrintable(file));
        return 0;
    }
    window.show();
    return app.exec();
}
