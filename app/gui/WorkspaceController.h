// The workspace operations of the GUI: the SQLite workspace that is open, the saved plan the
// window shows, and saving, opening, renaming, duplicating, deleting and comparing plans and
// recording runs of them. It keeps the Plans panel up to date; problems come back as sentences
// for its owner to show, and nothing here blocks on a dialog.
#pragma once

#include <QFuture>
#include <QObject>
#include <QString>

#include <memory>

class QTimer;
class QUndoStack;

namespace placer::store {
class PlanStore;
}

namespace placer::views {
class PlacementDocument;
}

namespace placer {
struct RunOutcome;
struct GenerationReport;
} // namespace placer

namespace placer::gui {

class PlanBrowser;

class WorkspaceController : public QObject {
    Q_OBJECT

public:
    WorkspaceController(views::PlacementDocument* document, QUndoStack* undo, PlanBrowser* browser,
                        QObject* parent = nullptr);
    ~WorkspaceController() override;

    /// Opens (or creates) a workspace file; false (the browser says why) when it cannot. A
    /// workspace that cannot be written opens for reading (its plans list and open; saving
    /// fails saying so), and the window's drafts go to a temporary workspace, which it names.
    bool open(const QString& path);
    /// That temporary workspace's file, while the workspace is read-only; else empty.
    QString draftWorkspace() const;
    store::PlanStore* store() const { return m_store.get(); }
    /// The saved plan the document shows ("" when none).
    const QString& planName() const { return m_planName; }
    /// The document now shows something that is not a saved plan.
    void forgetPlan() { m_planName.clear(); }

    /// Saves the document's plan as `name` (non-empty) and makes it the current plan; the
    /// undo stack's clean point follows.
    bool save(const QString& name);
    /// Saves under `name`, or under the current plan's name, asking for one (suggesting the
    /// graph's file name) when there is none or when `askAlways`; false when the user cancels.
    bool saveAsking(const QString& name = QString(), bool askAlways = false);
    /// Asks for a workspace file (an existing one or a new one) and opens it.
    void chooseWorkspace();
    /// Opens a saved plan into the document; says (problem) when the planner's answer changed.
    bool openPlan(const QString& name);
    bool rename(const QString& from, const QString& to);
    bool duplicate(const QString& from, const QString& to);
    bool remove(const QString& name);
    /// What differs between two saved plans, as HTML (nodes moved, copies, bytes, last runs).
    QString compare(const QString& a, const QString& b);
    /// Records a run of the current plan when it is saved and unchanged (`unsaved` false).
    void recordRun(const RunOutcome& outcome, bool unsaved);
    /// Keeps a generation of the current plan when it is saved and unchanged, as runs are.
    void recordGeneration(const GenerationReport& report, bool unsaved);

    /// Autosave: the window's unsaved edits are journaled as its draft in the workspace
    /// (store::PlanStore::saveDraft) shortly after each change, and the draft is dropped when
    /// the document matches what is saved again. This window's draft owner.
    const QString& draftOwner() const { return m_owner; }
    /// Writes or drops the draft now, and waits until it is written (the timer does it after
    /// each change without waiting: a snapshot of the edit state is written on a worker thread
    /// through a connection of its own, so that large graphs do not stall the window).
    void writeDraftNow() { writeDraft(true); }
    /// Drops this window's draft: after saving, or when the user discards the changes.
    void discardDraft();
    /// Offers back the drafts of windows that did not close cleanly ("Restore the unsaved
    /// changes to resnet50 from 14:32?"), newest first, until one is restored; those declined
    /// are deleted. True when one was restored.
    bool offerAbandonedDrafts();

signals:
    void problem(const QString& title, const QString& message);
    /// A saved plan is now the document's (after openPlan) or was just saved (after save).
    void planOpened(const QString& name);
    void planSaved(const QString& name);
    /// An abandoned draft is the document's now (of the saved plan `name`, or "" for none).
    void draftRestored(const QString& name);

private:
    views::PlacementDocument* m_document;
    QUndoStack* m_undo;
    PlanBrowser* m_browser;
    void writeDraft(bool wait);
    /// Waits for the draft being written on the worker thread, if any.
    void finishDraftWrite();

    /// Where drafts go: the workspace, or a temporary one while the workspace is read-only.
    store::PlanStore* draftStore() const {
        return m_draftStore ? m_draftStore.get() : m_store.get();
    }

    std::unique_ptr<store::PlanStore> m_store;
    std::unique_ptr<store::PlanStore> m_draftStore; ///< set while m_store is read-only
    QString m_planName;
    QString m_owner;
    QTimer* m_draftTimer;
    /// The worker's connection to draftStore()'s file (opened on the first write there).
    std::shared_ptr<store::PlanStore> m_draftWriter;
    QFuture<QString> m_draftWrite; ///< the write in flight: its error, or empty
};

} // namespace placer::gui
