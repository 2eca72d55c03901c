// Opening graphs in the window: a model file (large ones read in the background so the window
// stays live), the bundled example, dropped files, and the recent-files menu kept in QSettings.
#pragma once

#include "session/Session.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>

class QMenu;
class QWidget;

namespace placer::views {
class PlacementDocument;
}

namespace placer::gui {

class ModelOpener : public QObject {
    Q_OBJECT

public:
    ModelOpener(views::PlacementDocument* document, QObject* parent);
    ~ModelOpener() override;

    /// Opens a model file; a bad file reports `failed` and leaves the current graph open. Files
    /// larger than the background threshold are read on a worker thread (true means started).
    bool open(const QString& path, const InputShapes& inputShapes = {});
    /// Asks for a graph file (a dialog over `parent`) and opens it. Nothing else is asked: what
    /// the model leaves open is planned at a stand-in, and a run brings the shapes (the Run
    /// panel's inputs).
    void choose(QWidget* parent);
    /// Opens the bundled example (pins, inferred devices, copies and a note).
    bool openExample();
    /// Files larger than this many bytes are read in the background (default 4 MiB).
    void setBackgroundThreshold(qint64 bytes) { m_backgroundBytes = bytes; }
    /// Fills `menu` with the recent files, and keeps it filled.
    void attachRecentMenu(QMenu* menu);

    static constexpr const char* kExampleName = "split_residual_block.relay";

signals:
    /// A graph was opened; `name` is its file name, for the title.
    void opened(const QString& name);
    void failed(const QString& title, const QString& message);
    /// A background read started (`fileName`) or ended.
    void loading(const QString& fileName);
    void loaded();
    /// A sentence for the status bar (the reader's warnings).
    void message(const QString& text, int timeoutMs);

private:
    void finishBackground();
    void remember(const QString& path);
    void fillRecentMenu();
    void announce(const QString& path);

    views::PlacementDocument* m_document;
    QFutureWatcher<std::shared_ptr<Result<LoadedModel>>> m_watcher;
    QString m_loadingPath;
    InputShapes m_loadingShapes;
    QMenu* m_recentMenu = nullptr;
    qint64 m_backgroundBytes = 4 << 20;
};

} // namespace placer::gui
