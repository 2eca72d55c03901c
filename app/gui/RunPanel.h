// The Run panel: the data each graph input gets (a .npy file, random data at a shape the user
// types, or random data at the planned shape), iterations and warm-up, Run and Cancel, progress,
// the summary of the last run
// (latency, busy time and memory per device, the reference check) and its exports (Chrome trace,
// CSV). It starts runs of the document's plan on a RunController and says when one finished;
// what a run means for the canvas and the workspace is its owner's business.
#pragma once

#include "gui/RunController.h"

#include <QWidget>

#include <functional>
#include <memory>
#include <string>

class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QCheckBox;
class QTableWidget;
class QTextBrowser;

namespace placer::views {
class PlacementDocument;
struct TimelineData;
} // namespace placer::views

namespace placer::gui {

class RunPanel : public QWidget {
    Q_OBJECT

public:
    RunPanel(views::PlacementDocument* document, RunController* controller,
             QWidget* parent = nullptr);

    /// One row per graph input: its name, and what it gets. The data cell takes a .npy file's
    /// path, or a shape ("2,16,64" or "2x16x64") for seeded random data at that shape; empty,
    /// random data at the planned shape. Other shapes than planned are planned for at the run.
    QTableWidget* inputs() const { return m_inputs; }
    QSpinBox* iterations() const { return m_iterations; }
    QSpinBox* warmup() const { return m_warmup; }
    /// Re-place the work while the run goes (RunRequest::adapt).
    QCheckBox* adapt() const { return m_adapt; }
    /// The plan's micro-batches (PlanOptions::microBatches): changing it re-plans at once, so
    /// the predicted timeline shows the pipeline before any run.
    QSpinBox* microBatches() const { return m_microBatches; }
    /// The batches a run streams (PlanOptions::streamBatches): re-plans at once, as above.
    QSpinBox* streamBatches() const { return m_streamBatches; }
    QPushButton* runButton() const { return m_runButton; }
    /// Generate mode, for decoders with a KV cache (session/Generate.h): the prompt (token ids
    /// typed in, or a .npy file), how many tokens, and the button; tokens and tokens/s show as
    /// they come, the summary and a timeline per token at the end.
    QLineEdit* prompt() const { return m_prompt; }
    QSpinBox* newTokens() const { return m_newTokens; }
    QPushButton* generateButton() const { return m_generateButton; }
    QTextBrowser* summary() const { return m_summary; }

    /// Writes the last run as a Chrome trace (JSON) or as CSV timings; false without a finished
    /// run of the current plan or on a write error.
    bool exportTrace(const QString& path);
    bool exportTimingsCsv(const QString& path);

public slots:
    /// Runs the document's plan in the background; refused (with problem()) when the plan has
    /// a conflict that makes it unrunnable.
    void start();
    /// Generates from the document's plan in the background with the prompt and count above.
    void startGeneration();

signals:
    /// A run ended well (with its outcome); failures and cancels are shown in the panel.
    void finished(std::shared_ptr<const RunOutcome> outcome);
    /// A generation ended well: its report (the window draws its timeline).
    void generationFinished(std::shared_ptr<const GenerationReport> report);
    /// Something the user should see in a dialog: a refused or failed run, a failed export.
    void problem(const QString& title, const QString& message);
    /// The user set the Micro-batches box to `count`: the window re-plans, one undo step.
    void microBatchesChosen(int count);
    void streamBatchesChosen(int count);

private:
    void showOutcome();
    /// One row per input of the document's graph, keeping what rows of the same name held.
    void fillInputs();
    /// The data the rows ask for; false (and `problem` emitted, naming the input) when a file
    /// cannot be read or a shape cannot be parsed.
    bool readInputs(std::vector<std::pair<std::string, HostTensor>>* data);
    bool writeRunFile(const QString& path,
                      const std::function<std::string(const RunOutcome&)>& format);

    views::PlacementDocument* m_document;
    RunController* m_controller;
    QTableWidget* m_inputs;
    QSpinBox* m_iterations;
    QSpinBox* m_warmup;
    QSpinBox* m_microBatches;
    QSpinBox* m_streamBatches;
    QPushButton* m_runButton;
    QLineEdit* m_prompt;
    QSpinBox* m_newTokens;
    QPushButton* m_generateButton;
    QString m_tokensSoFar;
    QCheckBox* m_adapt;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QTextBrowser* m_summary;
};

/// The timeline of a finished run: a compute lane per physical device, a lane per copy source
/// and one for inputs, a bar per node, copy and input with its time; colours from `document`.
views::TimelineData runTimeline(const RunOutcome& outcome,
                                const views::PlacementDocument& document);
/// For a run that changed its plan (RunOutcome::events): an "iterations" lane on top with every
/// measured iteration end to end, the traced iteration's lanes moved under the last one, and a
/// marker with the reason where each change took effect.
void addIterations(const RunOutcome& outcome, views::TimelineData* timeline);
/// Per virtual device, what the device palette says of a finished run: where it ran and why
/// (mapped by load), and the failures and re-placements it was part of.
std::vector<QString> runDeviceLines(const RunOutcome& outcome);

/// The timeline of a generation: a lane of steps (the prompt, then a bar per token, labelled
/// with it) and a lane per virtual device with its busy time in each step; colours from
/// `document`.
views::TimelineData generationTimeline(const GenerationReport& report,
                                       const views::PlacementDocument& document);

/// The schedule the document's plan predicts (plan/Plan.h Prediction): a lane per device,
/// "predicted", a bar per op; appended below `into`'s lanes (a run's) when given.
void addPredictedTimeline(const views::PlacementDocument& document, views::TimelineData* into);

/// The summary of a finished run as HTML: latency, per-device busy time and memory, and the
/// reference check.
QString runSummaryHtml(const RunOutcome& outcome);

} // namespace placer::gui
