// The GUI's workspace operations: open, save, rename, duplicate, delete and compare plans, record
// runs.
#include "gui/WorkspaceController.h"

#include "gui/PlanBrowser.h"
#include "gui/RunController.h"
#include "ir/Graph.h"
#include "session/Session.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"
#include "views/PlacementDocument.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QStringList>
#include <QTimer>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include <unistd.h>

namespace placer::gui {

WorkspaceController::WorkspaceController(views::PlacementDocument* document, QUndoStack* undo,
                                         PlanBrowser* browser, QObject* parent)
    : QObject(parent), m_document(document), m_undo(undo), m_browser(browser),
      m_draftTimer(new QTimer(this)) {
    // Each window of the process keeps a draft of its own.
    static int windows = 0;
    m_owner = QString::fromStdString(store::draftOwner(++windows));
    // Every edit (and undo, redo, save) journals the document shortly after.
    m_draftTimer->setSingleShot(true);
    m_draftTimer->setInterval(250);
    connect(m_draftTimer, &QTimer::timeout, this, [this] { writeDraft(false); });
    connect(m_undo, &QUndoStack::indexChanged, m_draftTimer, qOverload<>(&QTimer::start));
    connect(m_undo, &QUndoStack::cleanChanged, m_draftTimer, qOverload<>(&QTimer::start));
    // The browser's buttons: open at once; ask for a name, or for confirmation, first.
    connect(m_browser, &PlanBrowser::openRequested, this, &WorkspaceController::openPlan);
    connect(m_browser, &PlanBrowser::renameRequested, this, [this](const QString& name) {
        bool ok = false;
        const QString to = QInputDialog::getText(m_browser, tr("Rename plan"), tr("New name:"),
                                                 QLineEdit::Normal, name, &ok);
        if (ok && !to.isEmpty())
            rename(name, to);
    });
    connect(m_browser, &PlanBrowser::duplicateRequested, this, [this](const QString& name) {
        bool ok = false;
        const QString to =
            QInputDialog::getText(m_browser, tr("Duplicate plan"), tr("Name of the copy:"),
                                  QLineEdit::Normal, name + tr(" copy"), &ok);
        if (ok && !to.isEmpty())
            duplicate(name, to);
    });
    connect(m_browser, &PlanBrowser::deleteRequested, this, [this](const QString& name) {
        if (QMessageBox::question(m_browser, tr("Delete plan"),
                                  tr("Delete the plan '%1' and its runs?").arg(name)) ==
            QMessageBox::Yes)
            remove(name);
    });
    connect(m_browser, &PlanBrowser::compareRequested, this,
            [this](const QString& a, const QString& b) {
                auto* box = new QMessageBox(QMessageBox::NoIcon, tr("Compare plans"), compare(a, b),
                                            QMessageBox::Close, m_browser->window());
                box->setObjectName(QStringLiteral("compareDialog"));
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->setTextFormat(Qt::RichText);
                box->open();
            });
}

WorkspaceController::~WorkspaceController() {
    if (m_draftWrite.isValid())
        m_draftWrite.waitForFinished();
}

QString WorkspaceController::draftWorkspace() const {
    return m_draftStore ? QString::fromStdString(m_draftStore->path()) : QString();
}

void WorkspaceController::finishDraftWrite() {
    if (!m_draftWrite.isValid())
        return;
    const QString error = m_draftWrite.result();
    m_draftWrite = QFuture<QString>();
    if (!error.isEmpty())
        emit problem(tr("Cannot keep a draft of the unsaved changes"), error);
}

void WorkspaceController::writeDraft(bool wait) {
    m_draftTimer->stop();
    if (!draftStore())
        return;
    if (m_undo->isClean()) {
        discardDraft();
        return;
    }
    if (m_draftWrite.isValid() && !m_draftWrite.isFinished()) {
        if (!wait) {
            m_draftTimer->start(); // the edit is written after the one in flight
            return;
        }
    }
    finishDraftWrite();
    const std::string path = draftStore()->path();
    if (!m_draftWriter || m_draftWriter->path() != path) {
        auto writer = store::PlanStore::open(path);
        if (!writer) {
            emit problem(tr("Cannot keep a draft of the unsaved changes"),
                         QString::fromStdString(writer.error().toString()));
            return;
        }
        m_draftWriter = std::shared_ptr<store::PlanStore>(writer.take().release());
    }
    // A snapshot of what the window shows, written on the worker.
    const Plan& plan = m_document->plan();
    m_draftWrite = QtConcurrent::run(
        [writer = m_draftWriter, owner = m_owner.toStdString(), name = m_planName.toStdString(),
         source = m_document->path().toStdString(),
         graph = std::make_shared<const Graph>(m_document->graph()),
         devices = m_document->devices(), options = m_document->options(),
         copies = static_cast<std::int64_t>(plan.copies.size()), bytes = plan.copiedBytes(),
         conflicts = static_cast<std::int64_t>(plan.conflicts.size())] {
            const Status saved = writer->saveDraft(owner, name, source, *graph, devices, options,
                                                   copies, bytes, conflicts);
            return saved.ok() ? QString() : QString::fromStdString(saved.error().toString());
        });
    if (wait)
        finishDraftWrite();
}

void WorkspaceController::discardDraft() {
    m_draftTimer->stop();
    finishDraftWrite(); // a late write would bring the draft back
    if (!draftStore())
        return;
    if (Status status = draftStore()->deleteDraft(m_owner.toStdString()); !status.ok())
        emit problem(tr("Cannot drop the draft of the unsaved changes"),
                     QString::fromStdString(status.error().toString()));
}

bool WorkspaceController::offerAbandonedDrafts() {
    if (!draftStore())
        return false;
    auto drafts = draftStore()->listDrafts();
    if (!drafts)
        return false;
    std::vector<store::DraftSummary> abandoned;
    for (const store::DraftSummary& d : drafts.value())
        if (d.abandoned)
            abandoned.push_back(d);
    std::reverse(abandoned.begin(), abandoned.end()); // newest first
    for (const store::DraftSummary& d : abandoned) {
        const QDateTime when =
            QDateTime::fromString(QString::fromStdString(d.updated), Qt::ISODate).toLocalTime();
        const QString at = when.toString(QStringLiteral("HH:mm"));
        const QString question = d.plan.empty() ? tr("Restore the unsaved plan of %1 from %2?")
                                                      .arg(QString::fromStdString(d.graph), at)
                                                : tr("Restore the unsaved changes to %1 from %2?")
                                                      .arg(QString::fromStdString(d.plan), at);
        QMessageBox box(QMessageBox::Question, tr("Unsaved changes"), question,
                        QMessageBox::NoButton, m_browser->window());
        box.setObjectName(QStringLiteral("offerDraft"));
        box.setInformativeText(
            tr("Placement Explorer did not close cleanly; these changes were "
               "kept as a draft in the workspace (%1 on %2, %n cop(ies)).",
               nullptr, static_cast<int>(d.copies))
                .arg(QString::fromStdString(d.graph), QString::fromStdString(d.devices)));
        QPushButton* restore = box.addButton(tr("Restore"), QMessageBox::AcceptRole);
        box.addButton(tr("Discard"), QMessageBox::DestructiveRole);
        box.setDefaultButton(restore);
        box.exec();
        if (box.clickedButton() != restore) {
            if (Status status = draftStore()->deleteDraft(d.id); !status.ok())
                emit problem(tr("Cannot discard the draft"),
                             QString::fromStdString(status.error().toString()));
            continue;
        }
        auto draft = draftStore()->loadDraft(d.id);
        if (!draft) {
            emit problem(tr("Cannot restore the draft"),
                         QString::fromStdString(draft.error().toString()));
            continue;
        }
        const PlanOptions options = draft.value().plan.options;
        m_document->setModel(std::move(draft.value().plan.model), QString::fromStdString(d.source));
        m_document->setOptions(options);
        m_planName = QString::fromStdString(d.plan);
        m_undo->clear();
        m_undo->resetClean(); // the restored edits are not saved
        // The draft is this window's now.
        if (Status status = draftStore()->deleteDraft(d.id); !status.ok())
            emit problem(tr("Cannot take over the draft"),
                         QString::fromStdString(status.error().toString()));
        writeDraftNow();
        if (!d.plan.empty())
            m_browser->select(m_planName);
        emit draftRestored(m_planName);
        return true;
    }
    return false;
}

bool WorkspaceController::open(const QString& path) {
    // The draft follows the window into the workspace it opens.
    discardDraft();
    auto opened = store::PlanStore::open(path.toStdString());
    if (!opened) {
        m_store.reset();
        m_browser->setStore(nullptr, QString::fromStdString(opened.error().toString()));
        return false;
    }
    m_store = opened.take();
    m_draftStore.reset();
    if (m_store->readOnly()) {
        // Drafts need a workspace that can be written: a temporary one of this user's, so that
        // the next start finds them while this one stays read-only.
        const QString folder =
            QDir::temp().filePath(QStringLiteral("placement-explorer-%1").arg(::getuid()));
        const QString drafts = QDir(folder).filePath(QStringLiteral("drafts.db"));
        auto temporary = store::PlanStore::open(drafts.toStdString());
        if (temporary)
            m_draftStore = temporary.take();
        m_browser->setStore(m_store.get(),
                            tr("Workspace: %1 (read-only; unsaved changes kept in %2)")
                                .arg(path, m_draftStore ? drafts : tr("nowhere")));
        emit problem(tr("The workspace is read-only"),
                     m_draftStore
                         ? tr("%1 cannot be written: its plans can be opened, but saving them "
                              "fails. Unsaved changes are kept as drafts in the temporary "
                              "workspace %2; open another workspace (File ▸ Open Workspace) to "
                              "save.")
                               .arg(path, drafts)
                         : tr("%1 cannot be written, and no temporary workspace could be made "
                              "for drafts (%2): unsaved changes are not kept.")
                               .arg(path, QString::fromStdString(temporary.error().message)));
    } else {
        m_browser->setStore(m_store.get(), tr("Workspace: %1").arg(path));
    }
    if (!m_undo->isClean())
        m_draftTimer->start();
    return true;
}

bool WorkspaceController::save(const QString& name) {
    if (!m_store) {
        emit problem(tr("Cannot save the plan"),
                     tr("No workspace is open (File ▸ Open Workspace)."));
        return false;
    }
    m_document->settlePrediction(); // a plan is saved whole
    const Status saved =
        m_store->savePlan(name.toStdString(), std::string(), m_document->graph(),
                          m_document->devices(), m_document->options(), m_document->plan());
    if (!saved.ok()) {
        emit problem(tr("Cannot save the plan"), QString::fromStdString(saved.error().toString()));
        return false;
    }
    m_planName = name;
    m_undo->setClean();
    discardDraft(); // the saved plan is what the window shows
    m_browser->refresh();
    m_browser->select(name);
    emit planSaved(name);
    return true;
}

bool WorkspaceController::saveAsking(const QString& requested, bool askAlways) {
    QString name = requested.isEmpty() ? m_planName : requested;
    if (name.isEmpty() || askAlways) {
        const QString suggestion =
            name.isEmpty() ? QFileInfo(m_document->path()).completeBaseName() : name;
        bool ok = false;
        name = QInputDialog::getText(m_browser->window(), tr("Save plan"), tr("Plan name:"),
                                     QLineEdit::Normal, suggestion, &ok);
        if (!ok || name.isEmpty())
            return false;
    }
    return save(name);
}

void WorkspaceController::chooseWorkspace() {
    const QString path = QFileDialog::getSaveFileName(
        m_browser->window(), tr("Workspace"), QString(), tr("Workspaces (*.db);;All files (*)"),
        nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty())
        open(path);
}

bool WorkspaceController::openPlan(const QString& name) {
    if (!m_store)
        return false;
    auto stored = m_store->loadPlan(name.toStdString());
    if (!stored) {
        emit problem(tr("Cannot open the plan"), QString::fromStdString(stored.error().toString()));
        return false;
    }
    const store::PlanCheck check = store::PlanStore::check(stored.value());
    const PlanOptions options = stored.value().options;
    m_document->setModel(std::move(stored.value().model), tr("plan %1").arg(name));
    m_document->setOptions(options); // rules, fallback, mode and constants, as saved
    m_planName = name;
    m_undo->clear();
    m_browser->select(name);
    emit planOpened(name);
    if (!check.differences.empty()) {
        QStringList lines;
        for (std::size_t i = 0; i < check.differences.size() && i < 20; ++i)
            lines << QString::fromStdString(check.differences[i]).toHtmlEscaped();
        emit problem(tr("The planner answers differently now"),
                     tr("Since '%1' was saved, the planner's answer changed:\n%2")
                         .arg(name, lines.join(QLatin1Char('\n'))));
    }
    return true;
}

bool WorkspaceController::rename(const QString& from, const QString& to) {
    if (!m_store)
        return false;
    if (Status status = m_store->renamePlan(from.toStdString(), to.toStdString()); !status.ok()) {
        emit problem(tr("Cannot rename the plan"),
                     QString::fromStdString(status.error().toString()));
        return false;
    }
    if (m_planName == from)
        m_planName = to;
    m_browser->refresh();
    m_browser->select(to);
    return true;
}

bool WorkspaceController::duplicate(const QString& from, const QString& to) {
    if (!m_store)
        return false;
    if (Status status = m_store->duplicatePlan(from.toStdString(), to.toStdString());
        !status.ok()) {
        emit problem(tr("Cannot duplicate the plan"),
                     QString::fromStdString(status.error().toString()));
        return false;
    }
    m_browser->refresh();
    m_browser->select(to);
    return true;
}

bool WorkspaceController::remove(const QString& name) {
    if (!m_store)
        return false;
    if (Status status = m_store->deletePlan(name.toStdString()); !status.ok()) {
        emit problem(tr("Cannot delete the plan"),
                     QString::fromStdString(status.error().toString()));
        return false;
    }
    if (m_planName == name)
        m_planName.clear();
    m_browser->refresh();
    return true;
}

QString WorkspaceController::compare(const QString& a, const QString& b) {
    if (!m_store)
        return QString();
    auto diff = m_store->diffPlans(a.toStdString(), b.toStdString());
    if (!diff)
        return QString::fromStdString(diff.error().toString()).toHtmlEscaped();
    const store::PlanDiff& d = diff.value();
    QString text = tr("<h3>%1 → %2</h3>").arg(a.toHtmlEscaped(), b.toHtmlEscaped());
    text += tr("<p>%n node(s) moved; ", nullptr, static_cast<int>(d.movedNodes.size()));
    text += tr("copies: %1 added, %2 removed; bytes copied %3 → %4.</p>")
                .arg(d.copiesAdded.size())
                .arg(d.copiesRemoved.size())
                .arg(QString::fromStdString(formatBytes(d.bytesA)),
                     QString::fromStdString(formatBytes(d.bytesB)));
    // The last runs: latency, and the nodes whose time changed most.
    auto runs = store::compareLastRuns(*m_store, a.toStdString(), b.toStdString());
    if (runs && runs.value()) {
        const store::RunComparison& c = *runs.value();
        text += tr("<p>Last runs: %1 ms → %2 ms (%3 on %4, %5 on %6)</p>")
                    .arg(c.a.latencyMs, 0, 'f', 3)
                    .arg(c.b.latencyMs, 0, 'f', 3)
                    .arg(a.toHtmlEscaped(), QString::fromStdString(c.a.mapping).toHtmlEscaped(),
                         b.toHtmlEscaped(), QString::fromStdString(c.b.mapping).toHtmlEscaped());
        if (c.predictedMsA || c.predictedMsB) {
            const auto predicted = [this](const std::optional<double>& ms) {
                return ms ? QString::number(*ms, 'f', 3) + tr(" ms") : tr("none");
            };
            text += tr("<p>Predicted: %1 → %2; measured: %3 ms → %4 ms</p>")
                        .arg(predicted(c.predictedMsA), predicted(c.predictedMsB))
                        .arg(c.a.latencyMs, 0, 'f', 3)
                        .arg(c.b.latencyMs, 0, 'f', 3);
        }
        if (!c.nodeChanges.empty()) {
            text += tr("<p><b>Largest changes in node time</b><br>");
            for (std::size_t i = 0; i < c.nodeChanges.size() && i < 8; ++i)
                text += QStringLiteral("%1: %2%3 ms<br>")
                            .arg(QString::fromStdString(c.nodeChanges[i].first).toHtmlEscaped())
                            .arg(c.nodeChanges[i].second >= 0 ? QStringLiteral("+") : QString())
                            .arg(c.nodeChanges[i].second, 0, 'f', 3);
            text += QStringLiteral("</p>");
        }
    } else {
        text += tr("<p>Run both plans to compare their latency.</p>");
    }
    auto list = [&](const QString& title, const std::vector<std::string>& items) {
        if (items.empty())
            return;
        text += QStringLiteral("<p><b>%1</b><br>").arg(title);
        for (std::size_t i = 0; i < items.size() && i < 40; ++i)
            text += QString::fromStdString(items[i]).toHtmlEscaped() + QStringLiteral("<br>");
        if (items.size() > 40)
            text += tr("… and %1 more").arg(items.size() - 40);
        text += QStringLiteral("</p>");
    };
    list(tr("Moved"), d.movedNodes);
    list(tr("Copies added"), d.copiesAdded);
    list(tr("Copies removed"), d.copiesRemoved);
    return text;
}

void WorkspaceController::recordRun(const RunOutcome& outcome, bool unsaved) {
    if (!m_store)
        return;
    // Every run's node times go into the cost table, so predictions learn from them.
    if (auto kept = recordCostsIn(*m_store, outcome); !kept)
        emit problem(tr("Cannot keep the run's node times"),
                     QString::fromStdString(kept.error().toString()));
    // Runs of a saved, unchanged plan go into the workspace with it, with what it predicted.
    if (m_planName.isEmpty() || unsaved)
        return;
    if (Status status = recordRunIn(*m_store, outcome, m_planName.toStdString()); !status.ok()) {
        emit problem(tr("Cannot record the run"),
                     QString::fromStdString(status.error().toString()));
        return;
    }
    m_browser->refresh();
    m_browser->select(m_planName);
}

void WorkspaceController::recordGeneration(const GenerationReport& report, bool unsaved) {
    if (!m_store || m_planName.isEmpty() || unsaved || report.steps.empty())
        return;
    if (Status status = m_store->saveGeneration(m_planName.toStdString(), generationRecord(report));
        !status.ok())
        emit problem(tr("Cannot keep the generation"),
                     QString::fromStdString(status.error().toString()));
}

} // namespace placer::gui
