// A long GUI session in one process (offscreen): the real window opens and closes models one
// after another (the bundled examples and models, round robin) and runs every other one through
// the Run panel, as a user working for an afternoon would. Resident memory is read after the
// first ten opens (everything warmed up) and at the end; the figure is their ratio (goal: at most
// 10 % growth). A failed open or run is a wrong result.
//
//   bench_session            200 opens, 100 runs
//   bench_session --quick    30 opens, 15 runs (what CTest runs)
#include "BenchFailures.h"
#include "gui/MainWindow.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/WorkspaceController.h"
#include "views/PlacementDocument.h"

#include <QApplication>
#include <QDir>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>

#include <cstdio>
#include <fstream>
#include <string>

using namespace placer;

namespace {

/// This process's resident memory, in bytes (/proc/self/status VmRSS).
double residentBytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stod(line.substr(6)) * 1024;
    }
    return 0;
}

/// Closes the window's error dialogs, returning their texts.
QStringList takeErrors(gui::MainWindow& window) {
    QStringList texts;
    for (QMessageBox* box : window.findChildren<QMessageBox*>(QStringLiteral("errorDialog"))) {
        if (!box->isVisible())
            continue;
        texts << box->text();
        box->accept();
    }
    QApplication::processEvents();
    return texts;
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const int opens = quick ? 30 : 200;
    QTemporaryDir home;
    qputenv("XDG_DATA_HOME", home.path().toUtf8());
    qputenv("XDG_CONFIG_HOME", home.path().toUtf8());
    qputenv("XDG_CACHE_HOME", home.path().toUtf8());

    QStringList models;
    for (const char* folder : {"/resources/models", "/resources/examples"}) {
        const QDir dir(QStringLiteral(PLACER_SOURCE_DIR) + QString::fromUtf8(folder));
        for (const QString& name :
             dir.entryList({QStringLiteral("*.onnx"), QStringLiteral("*.relay")}, QDir::Files))
            models << dir.filePath(name);
    }
    if (models.isEmpty()) {
        bench::wrong("session: no bundled models found");
        return bench::exitCode();
    }

    gui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    window.workspace()->open(home.filePath(QStringLiteral("ws.db")));
    double warm = 0;
    int runs = 0;
    for (int i = 0; i < opens; ++i) {
        const QString path = models[i % models.size()];
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        if (!window.openFile(path) || !laidOut.wait(60000)) {
            bench::wrong("session: opening " + path.toStdString() + " did not finish");
            continue;
        }
        for (const QString& error : takeErrors(window))
            bench::wrong("session: opening " + path.toStdString() + ": " + error.toStdString());
        if (i % 2 == 0) {
            QSignalSpy finished(window.runController(), &gui::RunController::finished);
            window.runPanel()->start();
            if (finished.isEmpty() && !finished.wait(120000))
                bench::wrong("session: the run of " + path.toStdString() + " did not finish");
            else if (!window.runController()->outcome())
                bench::wrong("session: the run of " + path.toStdString() + " gave no outcome");
            for (const QString& error : takeErrors(window))
                bench::wrong("session: running " + path.toStdString() + ": " + error.toStdString());
            ++runs;
        }
        // What a user leaves behind between models: the undo history goes with the model.
        window.undoStack()->clear();
        QApplication::processEvents();
        if (i + 1 == 10)
            warm = residentBytes();
        if ((i + 1) % 50 == 0)
            std::printf("session: %d opens, %d runs: %.1f MB resident\n", i + 1, runs,
                        residentBytes() / 1e6);
    }
    const double end = residentBytes();
    std::printf("session: %d opens and %d runs of %d models in one window; resident %.1f MB "
                "after 10 opens, %.1f MB at the end: growth %.1f %% (goal <= 10 %%)\n",
                opens, runs, static_cast<int>(models.size()), warm / 1e6, end / 1e6,
                warm > 0 ? (end / warm - 1) * 100 : 0.0);
    return bench::exitCode();
}
