// Opening graphs in the window: files read in the background, the example, drops and recent files.
#include "gui/ModelOpener.h"

#include "views/PlacementDocument.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <QtConcurrent/QtConcurrentRun>

namespace placer::gui {

namespace {
const QString kRecentKey = QStringLiteral("recentFiles");
constexpr int kRecentCount = 10;
} // namespace

ModelOpener::ModelOpener(views::PlacementDocument* document, QObject* parent)
    : QObject(parent), m_document(document) {
    connect(&m_watcher, &QFutureWatcher<std::shared_ptr<Result<LoadedModel>>>::finished, this,
            &ModelOpener::finishBackground);
}

ModelOpener::~ModelOpener() {
    m_watcher.waitForFinished();
}

bool ModelOpener::open(const QString& path, const InputShapes& inputShapes) {
    const QFileInfo info(path);
    if (info.size() > m_backgroundBytes) {
        // A large model (ONNX weights): read it in the background; the window stays live.
        if (m_watcher.isRunning())
            return false;
        m_loadingPath = path;
        m_loadingShapes = inputShapes;
        emit loading(info.fileName());
        ModelSource source;
        source.path = path.toStdString();
        source.inputShapes = inputShapes;
        m_watcher.setFuture(QtConcurrent::run([source] {
            return std::make_shared<Result<LoadedModel>>(loadSource(source, std::nullopt));
        }));
        return true;
    }
    QString error;
    if (!m_document->open(path, &error, std::nullopt, inputShapes)) {
        emit failed(tr("Cannot open %1").arg(info.fileName()), error);
        return false;
    }
    announce(path);
    return true;
}

void ModelOpener::choose(QWidget* parent) {
    const QString path =
        QFileDialog::getOpenFileName(parent, tr("Open a graph"), QString(),
                                     tr("Graphs (*.relay *.txt *.onnx *.json);;All files (*)"));
    if (path.isEmpty())
        return;
    open(path);
}

void ModelOpener::finishBackground() {
    const auto result = m_watcher.result();
    emit loaded();
    if (!result->ok()) {
        emit failed(tr("Cannot open %1").arg(QFileInfo(m_loadingPath).fileName()),
                    QString::fromStdString(result->error().toString()));
        return;
    }
    m_document->setModel(std::move(result->value()), m_loadingPath, m_loadingShapes);
    announce(m_loadingPath);
}

bool ModelOpener::openExample() {
    const QString name = QString::fromLatin1(kExampleName);
    QFile example(QStringLiteral(":/examples/") + name);
    QString error;
    if (!example.open(QIODevice::ReadOnly) ||
        !m_document->openText(example.readAll().toStdString(), name, &error)) {
        emit failed(tr("Cannot open the example"), error);
        return false;
    }
    emit opened(name);
    return true;
}

void ModelOpener::announce(const QString& path) {
    remember(path);
    emit opened(QFileInfo(path).fileName());
    for (const QString& warning : m_document->warnings())
        emit message(warning, 8000);
}

void ModelOpener::remember(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kRecentCount)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    fillRecentMenu();
}

void ModelOpener::attachRecentMenu(QMenu* menu) {
    m_recentMenu = menu;
    fillRecentMenu();
}

void ModelOpener::fillRecentMenu() {
    if (!m_recentMenu)
        return;
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { open(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

} // namespace placer::gui
