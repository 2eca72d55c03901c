// The Run panel, the timeline it fills from a run's outcome, and the summary it shows.
#include "gui/RunPanel.h"

#include "report/RunReport.h"
#include "session/Editing.h"

#include "views/PlacementDocument.h"
#include "views/TimelineWidget.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace placer::gui {

RunPanel::RunPanel(views::PlacementDocument* document, RunController* controller, QWidget* parent)
    : QWidget(parent), m_document(document), m_controller(controller),
      m_inputs(new QTableWidget(0, 2, this)), m_iterations(new QSpinBox(this)),
      m_warmup(new QSpinBox(this)), m_microBatches(new QSpinBox(this)),
      m_streamBatches(new QSpinBox(this)), m_runButton(new QPushButton(tr("Run"), this)),
      m_prompt(new QLineEdit(this)), m_newTokens(new QSpinBox(this)),
      m_generateButton(new QPushButton(tr("Generate"), this)),
      m_adapt(new QCheckBox(tr("Adapt"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)), m_summary(new QTextBrowser(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_inputs->setObjectName(QStringLiteral("inputs"));
    m_inputs->setHorizontalHeaderLabels({tr("Input"), tr("Data")});
    m_inputs->horizontalHeader()->setStretchLastSection(true);
    m_inputs->verticalHeader()->hide();
    m_inputs->setToolTip(tr("Data for each input: a .npy file, a shape such as 2,16,64 for "
                            "random data at that shape, or nothing for random data at the "
                            "planned shape. Other shapes are planned for when the run starts."));
    m_inputs->setMaximumHeight(58);
    m_inputs->verticalHeader()->setDefaultSectionSize(20);
    auto* inputRow = new QHBoxLayout;
    inputRow->addWidget(m_inputs, 1);
    auto* file = new QPushButton(tr(".npy…"), this);
    file->setObjectName(QStringLiteral("loadInput"));
    file->setToolTip(tr("Choose a .npy file for the selected input"));
    inputRow->addWidget(file, 0, Qt::AlignTop);
    layout->addLayout(inputRow);
    connect(file, &QPushButton::clicked, this, [this] {
        const int row = m_inputs->currentRow();
        if (row < 0)
            return;
        const QString path = QFileDialog::getOpenFileName(this, tr("Data for an input"), QString(),
                                                          tr("NumPy arrays (*.npy)"));
        if (!path.isEmpty())
            m_inputs->item(row, 1)->setText(path);
    });
    connect(m_document, &views::PlacementDocument::modelReset, this, &RunPanel::fillInputs);
    fillInputs();
    auto* form = new QFormLayout;
    m_iterations->setObjectName(QStringLiteral("iterations"));
    m_iterations->setRange(1, 10000);
    m_iterations->setValue(10);
    m_warmup->setObjectName(QStringLiteral("warmup"));
    m_warmup->setRange(0, 1000);
    m_warmup->setValue(1);
    // Iterations and warm-up share a row, so that the panel stays as short as it was.
    auto* counts = new QHBoxLayout;
    counts->addWidget(m_iterations, 1);
    counts->addWidget(new QLabel(tr("Warm-up:"), this));
    counts->addWidget(m_warmup, 1);
    m_adapt->setObjectName(QStringLiteral("adapt"));
    m_adapt->setToolTip(
        tr("Re-place the work between iterations (or a generation's steps) when a device stays "
           "slower or faster than the plan assumed (auto mode with the measured speeds; pins "
           "and rules hold). Each change is a marker on the timeline. A device that fails is "
           "always left out."));
    counts->addWidget(m_adapt);
    form->addRow(tr("Iterations:"), counts);
    m_microBatches->setObjectName(QStringLiteral("microBatches"));
    m_microBatches->setRange(1, 256);
    m_microBatches->setValue(std::max(1, m_document->options().microBatches));
    m_microBatches->setSpecialValueText(tr("1 (not pipelined)"));
    m_microBatches->setToolTip(
        tr("Pipeline the plan: the batch is cut into this many micro-batches that flow through "
           "the devices, each device working on one while the next works on the one before. "
           "The plan and its predicted timeline follow at once."));
    m_streamBatches->setObjectName(QStringLiteral("streamBatches"));
    m_streamBatches->setRange(1, 256);
    m_streamBatches->setValue(std::max(1, m_document->options().streamBatches));
    m_streamBatches->setSpecialValueText(tr("1 (one batch)"));
    m_streamBatches->setToolTip(
        tr("Throughput mode: this many batches back to back through the pipeline, the next "
           "entering the first device while the last drains. The run reports items per "
           "second and each batch's latency."));
    auto* pipelining = new QHBoxLayout;
    pipelining->addWidget(m_microBatches, 1);
    pipelining->addWidget(new QLabel(tr("Stream:"), this));
    pipelining->addWidget(m_streamBatches, 1);
    form->addRow(tr("Micro-batches:"), pipelining);
    connect(m_microBatches, &QSpinBox::valueChanged, this, [this](int count) {
        if (std::max(1, m_document->options().microBatches) != count)
            emit microBatchesChosen(count); // an undo step (MainWindow)
    });
    connect(m_streamBatches, &QSpinBox::valueChanged, this, [this](int count) {
        if (std::max(1, m_document->options().streamBatches) != count)
            emit streamBatchesChosen(count); // an undo step (MainWindow)
    });
    // A plan opened or planned elsewhere with other micro-batches or batches streamed.
    connect(m_document, &views::PlacementDocument::planChanged, this, [this] {
        for (const auto& [box, count] :
             {std::pair{m_microBatches, std::max(1, m_document->options().microBatches)},
              std::pair{m_streamBatches, std::max(1, m_document->options().streamBatches)}}) {
            if (box->value() != count) {
                const QSignalBlocker block(box);
                box->setValue(count);
            }
        }
    });
    // Generate mode: a decoder's tokens, one step at a time on this plan.
    m_prompt->setObjectName(QStringLiteral("prompt"));
    m_prompt->setPlaceholderText(tr("prompt: ids or .npy"));
    m_prompt->setToolTip(tr("The prompt for Generate: token ids, or a .npy file of them. The "
                            "model's KV cache (past_* in, present_* out) is carried from each "
                            "step to the next."));
    m_newTokens->setObjectName(QStringLiteral("newTokens"));
    m_newTokens->setRange(1, 4096);
    m_newTokens->setValue(32);
    m_newTokens->setToolTip(tr("How many tokens Generate makes"));
    m_generateButton->setObjectName(QStringLiteral("generate"));
    layout->addLayout(form);
    // One row for both modes, so that the panel stays as short as it was: Run and Cancel, then
    // the prompt, the count and Generate.
    auto* buttons = new QHBoxLayout;
    m_runButton->setObjectName(QStringLiteral("run"));
    m_cancel->setEnabled(false);
    buttons->addWidget(m_runButton, 1);
    buttons->addWidget(m_cancel, 1);
    buttons->addSpacing(6);
    buttons->addWidget(m_prompt, 2);
    buttons->addWidget(m_newTokens, 1);
    buttons->addWidget(m_generateButton, 1);
    for (QWidget* field : {static_cast<QWidget*>(m_prompt), static_cast<QWidget*>(m_newTokens)})
        field->setMaximumHeight(m_runButton->sizeHint().height());
    layout->addLayout(buttons);
    m_progress->setValue(0);
    layout->addWidget(m_progress);
    m_summary->setHtml(tr("<i>Runs execute the plan: cpu devices on the host, cuda devices on "
                          "their GPU where this machine has one, the others on virtual CPUs. "
                          "Per-node times overlay the graph, the timeline shows each "
                          "device.</i>"));
    m_summary->setMinimumHeight(32); // it scrolls: the inputs above need the room more
    layout->addWidget(m_summary, 1);
    auto* exports = new QHBoxLayout;
    auto* trace = new QPushButton(tr("Export trace…"), this);
    auto* csv = new QPushButton(tr("Export CSV…"), this);
    exports->addWidget(trace);
    exports->addWidget(csv);
    layout->addLayout(exports);
    connect(m_runButton, &QPushButton::clicked, this, &RunPanel::start);
    connect(m_generateButton, &QPushButton::clicked, this, &RunPanel::startGeneration);
    connect(m_controller, &RunController::token, this,
            [this](qint64 token, int index, double perSecond) {
                m_tokensSoFar +=
                    (index == 0 ? QString() : QStringLiteral(" ")) + QString::number(token);
                m_progress->setRange(0, m_newTokens->value());
                m_progress->setValue(index + 1);
                m_progress->setFormat(perSecond > 0
                                          ? tr("%v tokens, %1 tokens/s").arg(perSecond, 0, 'f', 1)
                                          : tr("%v tokens"));
                m_summary->setHtml(tr("<i>Generating…</i><p><tt>%1</tt></p>").arg(m_tokensSoFar));
            });
    connect(m_controller, &RunController::generated, this, [this] {
        m_runButton->setEnabled(true);
        m_generateButton->setEnabled(true);
        m_cancel->setEnabled(false);
        const auto report = m_controller->generation();
        if (!report) {
            m_summary->setHtml(QStringLiteral("<p style='color:#b01010'>%1</p>")
                                   .arg(m_controller->error().toHtmlEscaped()));
            emit problem(tr("Generation failed"), m_controller->error());
            return;
        }
        QString tokens;
        for (const std::int64_t token : report->tokens)
            tokens += (tokens.isEmpty() ? QString() : QStringLiteral(" ")) + QString::number(token);
        m_summary->setHtml(
            QStringLiteral("<p><tt>%1</tt></p><pre>%2</pre>")
                .arg(tokens, QString::fromStdString(generationSummary(*report)).toHtmlEscaped()));
        emit generationFinished(report);
    });
    connect(m_cancel, &QPushButton::clicked, m_controller, &RunController::cancel);
    connect(trace, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export trace"), QString(),
                                                          tr("Chrome trace (*.json)"));
        if (!path.isEmpty() && !exportTrace(path))
            emit problem(tr("Export failed"), tr("Cannot write %1 (has the plan run?)").arg(path));
    });
    connect(csv, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export timings"), QString(), tr("CSV (*.csv)"));
        if (!path.isEmpty() && !exportTimingsCsv(path))
            emit problem(tr("Export failed"), tr("Cannot write %1 (has the plan run?)").arg(path));
    });
    connect(m_controller, &RunController::loading, this, [this](int perMille) {
        m_progress->setFormat(tr("loading weights %p%"));
        m_progress->setRange(0, 1000);
        m_progress->setValue(perMille);
    });
    connect(m_controller, &RunController::progress, this, [this](int done, int total) {
        m_progress->setFormat(tr("%p%"));
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_controller, &RunController::finished, this, &RunPanel::showOutcome);
}

void RunPanel::start() {
    if (m_controller->isRunning() || m_document->isEmpty())
        return;
    for (const Conflict& conflict : m_document->plan().conflicts) {
        if (conflict.kind == ConflictKind::Unsupported) {
            emit problem(tr("Cannot run"), QString::fromStdString(conflict.message));
            return;
        }
    }
    RunController::Data data;
    if (!readInputs(&data.inputs))
        return;
    data.adapt = m_adapt->isChecked();
    m_document->settlePrediction(); // the run is set against the plan's prediction
    const QString& path = m_document->path();
    if (!path.isEmpty() && QFileInfo::exists(path))
        data.source = ModelSource{path.toStdString()};
    m_runButton->setEnabled(false);
    m_cancel->setEnabled(true);
    m_progress->setRange(0, m_iterations->value() + m_warmup->value());
    m_progress->setValue(0);
    m_summary->setHtml(tr("<i>Running…</i>"));
    m_controller->start(m_document->graph(), m_document->devices(), m_document->plan(),
                        m_document->options(), m_warmup->value(), m_iterations->value(),
                        m_document->physicalDevices(), std::move(data));
}

void RunPanel::startGeneration() {
    if (m_controller->isRunning() || m_document->isEmpty())
        return;
    auto prompt = promptFromText(m_prompt->text().trimmed().toStdString());
    if (!prompt || prompt.value().empty()) {
        emit problem(tr("Cannot generate"),
                     prompt ? tr("Type the prompt's token ids (1,2,3) or choose a .npy file.")
                            : QString::fromStdString(prompt.error().toString()));
        return;
    }
    GenerateRequest request;
    request.prompt = prompt.take();
    request.maxNewTokens = m_newTokens->value();
    request.adapt = m_adapt->isChecked();
    const QString& path = m_document->path();
    std::optional<ModelSource> source;
    if (!path.isEmpty() && QFileInfo::exists(path))
        source = ModelSource{path.toStdString()};
    m_runButton->setEnabled(false);
    m_generateButton->setEnabled(false);
    m_cancel->setEnabled(true);
    m_tokensSoFar.clear();
    m_progress->setRange(0, request.maxNewTokens);
    m_progress->setValue(0);
    m_summary->setHtml(tr("<i>Generating…</i>"));
    m_controller->startGeneration(m_document->graph(), m_document->devices(), m_document->plan(),
                                  m_document->options(), m_document->physicalDevices(),
                                  std::move(source), std::move(request));
}

namespace {

/// A run's or generation's event at `at` on the timeline: red where a device failed, amber
/// where the work was re-placed, labelled with what happened and what moved.
views::TimelineMarker eventMarker(const RunEvent& event, double at) {
    views::TimelineMarker marker;
    marker.at = at;
    const bool failed = event.kind == RunEvent::Kind::DeviceFailed;
    marker.colour = failed ? QColor(0xc0, 0x30, 0x30) : QColor(0xd0, 0x80, 0x10);
    marker.label = (failed ? RunPanel::tr("failed: %1") : RunPanel::tr("re-placed: %1"))
                       .arg(QString::fromStdString(event.text()));
    return marker;
}

} // namespace

views::TimelineData generationTimeline(const GenerationReport& report,
                                       const views::PlacementDocument& document) {
    views::TimelineData data;
    data.lanes.push_back(RunPanel::tr("steps"));
    std::vector<QString> deviceLanes;
    const DeviceSet& devices = document.devices();
    const auto laneOf = [&](const std::string& name) {
        const QString lane = QString::fromStdString(name);
        const auto it = std::find(data.lanes.begin(), data.lanes.end(), lane);
        if (it != data.lanes.end())
            return static_cast<int>(it - data.lanes.begin());
        data.lanes.push_back(lane);
        return static_cast<int>(data.lanes.size() - 1);
    };
    const auto colourOf = [&](const std::string& name) {
        const auto device = devices.find(name.substr(0, name.find('+')));
        return device ? document.deviceColor(*device).lighter(112) : QColor(160, 160, 160);
    };
    double at = 0;
    std::size_t nextEvent = 0;
    for (std::size_t s = 0; s < report.steps.size(); ++s) {
        const GenerateStep& step = report.steps[s];
        const double micros = step.wallMs * 1000.0;
        // A device left out in this step (it ran again without it), or the plan re-placed
        // before it: a marker at its start.
        while (nextEvent < report.events.size() &&
               report.events[nextEvent].iteration == static_cast<int>(s)) {
            const RunEvent& event = report.events[nextEvent++];
            views::TimelineMarker marker = eventMarker(event, at);
            marker.tooltip =
                (event.kind == RunEvent::Kind::DeviceFailed
                     ? RunPanel::tr("In step %1: %2\nPlanned again without it and swapped in "
                                    "%3 ms; the step ran again")
                           .arg(s)
                           .arg(QString::fromStdString(event.text()))
                           .arg(event.replanMs, 0, 'f', 1)
                     : RunPanel::tr("Before step %1: %2\nPlanned again and swapped in %3 ms; "
                                    "a step took %4 ms before, %5 ms after")
                           .arg(s)
                           .arg(QString::fromStdString(event.text()))
                           .arg(event.replanMs, 0, 'f', 1)
                           .arg(event.beforeMs, 0, 'f', 2)
                           .arg(event.afterMs, 0, 'f', 2));
            data.markers.push_back(marker);
        }
        views::TimelineBar bar;
        bar.lane = 0;
        bar.start = at;
        bar.end = at + micros;
        bar.colour = s == 0 ? QColor(120, 144, 176)
                            : (s % 2 ? QColor(150, 170, 200) : QColor(136, 158, 190));
        const QString token =
            s < report.tokens.size() ? QString::number(report.tokens[s]) : QString();
        bar.label = s == 0 ? RunPanel::tr("prompt (%1) → %2").arg(step.tokens).arg(token) : token;
        bar.tooltip = (s == 0 ? RunPanel::tr("Prompt of %1 tokens: %2 ms, first token %3")
                                    .arg(step.tokens)
                                    .arg(step.wallMs, 0, 'f', 2)
                                    .arg(token)
                              : RunPanel::tr("Token %1 (%2): %3 ms, kernels %4 ms")
                                    .arg(s)
                                    .arg(token)
                                    .arg(step.wallMs, 0, 'f', 2)
                                    .arg(step.kernelsMs, 0, 'f', 2));
        data.bars.push_back(bar);
        for (const auto& [device, busy] : step.busyMs) {
            views::TimelineBar work;
            work.lane = laneOf(device);
            work.start = at;
            work.end = at + busy * 1000.0;
            work.colour = colourOf(device);
            work.tooltip = RunPanel::tr("%1 busy %2 ms in step %3")
                               .arg(QString::fromStdString(device))
                               .arg(busy, 0, 'f', 3)
                               .arg(s);
            data.bars.push_back(work);
        }
        at += micros;
    }
    data.duration = at;
    return data;
}

void RunPanel::fillInputs() {
    std::map<QString, QString> kept;
    for (int row = 0; row < m_inputs->rowCount(); ++row)
        kept[m_inputs->item(row, 0)->text()] = m_inputs->item(row, 1)->text();
    m_inputs->setRowCount(0);
    const Graph& graph = m_document->graph();
    for (const Node& node : graph.nodes()) {
        if (!node.isParameter())
            continue;
        const int row = m_inputs->rowCount();
        m_inputs->insertRow(row);
        const QString name = QString::fromStdString(node.name);
        auto* label = new QTableWidgetItem(name);
        label->setFlags(label->flags() & ~Qt::ItemIsEditable);
        label->setToolTip(tr("Planned as %1")
                              .arg(QString::fromStdString(node.outputs.empty()
                                                              ? std::string()
                                                              : node.outputs[0].toShortString())));
        m_inputs->setItem(row, 0, label);
        const auto old = kept.find(name);
        m_inputs->setItem(row, 1,
                          new QTableWidgetItem(old == kept.end() ? QString() : old->second));
    }
    m_inputs->resizeColumnToContents(0);
}

bool RunPanel::readInputs(std::vector<std::pair<std::string, HostTensor>>* data) {
    const Graph& graph = m_document->graph();
    for (int row = 0; row < m_inputs->rowCount(); ++row) {
        const std::string name = m_inputs->item(row, 0)->text().toStdString();
        const QString text = m_inputs->item(row, 1)->text().trimmed();
        const auto id = graph.find(name);
        if (text.isEmpty() || !id)
            continue;
        // A .npy file, or a shape for seeded random data (as the session reads either).
        auto tensor =
            inputFromText(graph, name, text.toStdString(), static_cast<std::uint64_t>(row) + 1);
        if (!tensor) {
            // The session's sentence names the input and says what is wrong with the text.
            emit problem(tr("Cannot run"), QString::fromStdString(tensor.error().toString()));
            return false;
        }
        data->emplace_back(name, tensor.take());
    }
    return true;
}

void RunPanel::showOutcome() {
    m_runButton->setEnabled(true);
    m_cancel->setEnabled(false);
    const auto outcome = m_controller->outcome();
    if (!outcome) {
        const QString& error = m_controller->error();
        m_summary->setHtml(
            QStringLiteral("<p style='color:#b01010'>%1</p>").arg(error.toHtmlEscaped()));
        emit problem(tr("The run failed"), error);
        return;
    }
    if (outcome->cancelled()) {
        m_summary->setHtml(tr("<i>The run was cancelled.</i>"));
        return;
    }
    m_summary->setHtml(runSummaryHtml(*outcome));
    // Shapes in named dimensions, and those found at run time, show what this run had.
    m_document->setRanSizes(ranSizes(*outcome));
    emit finished(outcome);
}

bool RunPanel::exportTrace(const QString& path) {
    return writeRunFile(path,
                        [](const RunOutcome& run) { return chromeTrace(run).dump(-1) + "\n"; });
}

bool RunPanel::exportTimingsCsv(const QString& path) {
    return writeRunFile(path, runTimingsCsv);
}

bool RunPanel::writeRunFile(const QString& path,
                            const std::function<std::string(const RunOutcome&)>& format) {
    const auto outcome = m_controller->outcome();
    if (!outcome || !outcome->executor || outcome->cancelled())
        return false;
    const std::string text = format(*outcome);
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) &&
           file.write(text.data(), static_cast<qint64>(text.size())) ==
               static_cast<qint64>(text.size()) &&
           file.commit();
}

void addPredictedTimeline(const views::PlacementDocument& document, views::TimelineData* into) {
    // A plan that splits predicts its sharded graph's schedule: each shard on its device.
    const bool sharded = document.plan().sharded && document.plan().sharded->plan->prediction;
    const Plan& plan = sharded ? *document.plan().sharded->plan : document.plan();
    if (!plan.prediction)
        return;
    const Prediction& p = *plan.prediction;
    const Graph& graph = sharded ? document.plan().sharded->graph : document.graph();
    const DeviceSet& devices = document.devices();
    const int first = static_cast<int>(into->lanes.size());
    const std::size_t firstBar = into->bars.size();
    for (int d = 0; d < devices.size(); ++d)
        into->lanes.push_back(
            RunPanel::tr("%1 predicted").arg(QString::fromStdString(devices[DeviceId(d)].name)));
    std::vector<QColor> colours, shaded;
    for (int d = 0; d < devices.size(); ++d) {
        colours.push_back(document.deviceColor(DeviceId(d)).lighter(112));
        shaded.push_back(colours.back().darker(125));
    }
    for (std::uint32_t i = 0; i < graph.size() && i < p.micros.size(); ++i) {
        const Node& node = graph.nodes()[i];
        const DeviceId device = plan.devices[i];
        if (node.role() != OpRole::Compute || !device.valid() || p.end[i] <= p.start[i])
            continue;
        views::TimelineBar bar;
        bar.lane = first + device.index;
        bar.start = p.start[i];
        bar.end = p.end[i];
        // The predicted pipeline's micro-batches are shaded as the measured ones are.
        bar.colour = node.microBatch % 2 == 1 ? shaded[static_cast<std::size_t>(device.index)]
                                              : colours[static_cast<std::size_t>(device.index)];
        bar.key = static_cast<int>(i); // its label and tooltip are made when shown (below)
        into->bars.push_back(bar);
    }
    into->duration = std::max(into->duration, p.makespanMicros);
    // Where a device is predicted to wait: hatched under its work. In a pipeline these are its
    // bubbles, before the first micro-batch reaches it (fill), between micro-batches and after
    // its last (drain).
    const bool pipelined = runsInMicroBatches(graph);
    std::vector<std::vector<std::pair<double, double>>> busy(
        static_cast<std::size_t>(devices.size()));
    for (std::size_t b = firstBar; b < into->bars.size(); ++b)
        busy[static_cast<std::size_t>(into->bars[b].lane - first)].emplace_back(into->bars[b].start,
                                                                                into->bars[b].end);
    std::vector<views::TimelineBar> waits;
    const double shortest = p.makespanMicros * 0.005; // gaps under 0.5 % are not drawn
    for (std::size_t d = 0; d < busy.size(); ++d) {
        auto& spans = busy[d];
        if (spans.empty())
            continue;
        std::sort(spans.begin(), spans.end());
        double reached = 0;
        const auto addWait = [&](double start, double end, const QString& kind) {
            if (end - start < std::max(shortest, 1.0))
                return;
            views::TimelineBar bar;
            bar.idle = true;
            bar.lane = first + static_cast<int>(d);
            bar.start = start;
            bar.end = end;
            bar.label = kind;
            bar.tooltip = RunPanel::tr("%1: %2 idle %3 predicted")
                              .arg(kind, QString::fromStdString(devices[DeviceId(int(d))].name),
                                   QString::fromStdString(formatMillis(end - start)));
            waits.push_back(bar);
        };
        for (std::size_t k = 0; k < spans.size(); ++k) {
            if (spans[k].first > reached)
                addWait(reached, spans[k].first,
                        !pipelined ? RunPanel::tr("waiting")
                        : k == 0   ? RunPanel::tr("bubble (fill)")
                                   : RunPanel::tr("bubble"));
            reached = std::max(reached, spans[k].second);
        }
        if (pipelined)
            addWait(reached, p.makespanMicros, RunPanel::tr("bubble (drain)"));
    }
    into->bars.insert(into->bars.begin() + static_cast<std::ptrdiff_t>(firstBar), waits.begin(),
                      waits.end());
    // The hovered bar's sentence, from the document when it is shown: the timeline is made
    // again on every re-plan, so the document's plan then is this one.
    const views::PlacementDocument* source = &document;
    into->name = [source, sharded](int key) {
        const Graph& nodes = sharded ? source->plan().sharded->graph : source->graph();
        if (key < 0 || static_cast<std::size_t>(key) >= nodes.size())
            return QString();
        const Node& node = nodes.nodes()[static_cast<std::size_t>(key)];
        const QString name = QString::fromStdString(node.name);
        // The predicted pipeline, numbered as the measured one is.
        return node.microBatch >= 0 ? RunPanel::tr("µb%1 %2").arg(node.microBatch).arg(name) : name;
    };
    into->describe = [source, sharded](int key) {
        const Plan& now = sharded ? *source->plan().sharded->plan : source->plan();
        const Graph& nodes = sharded ? source->plan().sharded->graph : source->graph();
        const auto k = static_cast<std::size_t>(key);
        if (!now.prediction || k >= nodes.size() || k >= now.prediction->micros.size() ||
            k >= now.devices.size() || !now.devices[k].valid())
            return QString();
        const Node& node = nodes.nodes()[k];
        return RunPanel::tr("%1 (%2) on %3: %4 predicted%5")
            .arg(QString::fromStdString(node.name), QString::fromStdString(node.op->name),
                 QString::fromStdString(source->devices()[now.devices[k]].name),
                 QString::fromStdString(formatMillis(now.prediction->micros[k])),
                 now.prediction->measured[k] ? RunPanel::tr(" (from earlier runs)") : QString());
    };
}

views::TimelineData runTimeline(const RunOutcome& outcome,
                                const views::PlacementDocument& document) {
    const Program& program = outcome.executor->program();
    const RunResult& result = outcome.result;
    const Graph& graph = outcome.graph();
    // The timeline: a compute lane per physical device, a lane per copy source and for inputs.
    views::TimelineData timeline;
    std::map<std::pair<int, std::string>, int> lanes;
    auto laneFor = [&](int stream, const std::string& key, const QString& label) {
        auto [it, inserted] = lanes.emplace(std::pair{stream, key}, 0);
        if (inserted) {
            it->second = static_cast<int>(timeline.lanes.size());
            timeline.lanes.push_back(label);
        }
        return it->second;
    };
    for (std::size_t s = 0; s < result.streams.size(); ++s)
        laneFor(static_cast<int>(s), "compute",
                RunPanel::tr("%1 compute").arg(QString::fromStdString(result.streams[s].physical)));
    for (const TimedEvent& event : result.trace) {
        const Instruction& instr = program.code[event.instruction];
        const std::string physical =
            result.streams[static_cast<std::size_t>(event.stream)].physical;
        views::TimelineBar bar;
        bar.start = event.start - result.traceOrigin;
        bar.end = event.end - result.traceOrigin;
        bar.colour = document.deviceColor(instr.device);
        const QString time = QString::number((event.end - event.start) / 1000.0, 'f', 3);
        if (instr.op == Opcode::Invoke) {
            const Node& node = graph.node(instr.node);
            bar.lane = laneFor(event.stream, "compute", QString());
            bar.label = QString::fromStdString(node.name);
            bar.tooltip =
                RunPanel::tr("%1 (%2) on %3 [%4]: %5 ms")
                    .arg(QString::fromStdString(node.name), QString::fromStdString(node.op->name),
                         QString::fromStdString(outcome.devices[instr.device].name),
                         QString::fromStdString(physical), time);
            if (node.microBatch >= 0) {
                // A pipeline's micro-batches: numbered, neighbours told apart by shade.
                bar.label = RunPanel::tr("µb%1 %2").arg(node.microBatch).arg(bar.label);
                bar.tooltip += RunPanel::tr(", micro-batch %1").arg(node.microBatch);
                if (node.microBatch % 2 == 1)
                    bar.colour = bar.colour.darker(125);
            }
        } else if (instr.op == Opcode::DeviceCopy) {
            const std::string from = outcome.devices[instr.srcDevice].name;
            bar.lane =
                laneFor(event.stream, "copy " + from,
                        RunPanel::tr("copies %1 → %2")
                            .arg(QString::fromStdString(from),
                                 QString::fromStdString(outcome.devices[instr.device].name)));
            bar.colour = document.deviceColor(instr.srcDevice).darker(115);
            bar.label =
                QString::fromStdString(program.registers[static_cast<std::size_t>(instr.dst)].name);
            bar.tooltip =
                RunPanel::tr("copy %1, %2: %3 ms")
                    .arg(bar.label, QString::fromStdString(formatBytes(instr.bytes)), time);
        } else {
            bar.lane = laneFor(event.stream, "input",
                               RunPanel::tr("inputs → %1").arg(QString::fromStdString(physical)));
            bar.label = QString::fromStdString(graph.node(instr.node).name);
            bar.tooltip = RunPanel::tr("input %1: %2 ms").arg(bar.label, time);
        }
        timeline.duration = std::max(timeline.duration, bar.end);
        timeline.bars.push_back(bar);
    }
    // Where a device waited, and for what: hatched, under the work, on its compute lane.
    std::vector<views::TimelineBar> idle;
    for (const IdleStretch& stretch : result.idle) {
        views::TimelineBar bar;
        bar.idle = true;
        bar.lane = laneFor(stretch.stream, "compute", QString());
        bar.start = stretch.start - result.traceOrigin;
        bar.end = stretch.end - result.traceOrigin;
        const QString reason = QString::fromStdString(idleReason(outcome, stretch));
        const QString time = QString::number((stretch.end - stretch.start) / 1000.0, 'f', 3);
        if (stretch.waitedFor >= 0) {
            const Instruction& waited = program.code[static_cast<std::size_t>(stretch.waitedFor)];
            bar.label = RunPanel::tr("waiting for %1")
                            .arg(QString::fromStdString(
                                waited.op == Opcode::DeviceCopy
                                    ? program.registers[static_cast<std::size_t>(waited.dst)].name
                                    : graph.node(waited.node).name));
        }
        bar.tooltip = RunPanel::tr("idle %1 ms, waiting for %2").arg(time, reason);
        idle.push_back(bar);
    }
    timeline.bars.insert(timeline.bars.begin(), idle.begin(), idle.end());
    if (!result.latencyMicros.empty())
        timeline.duration = std::max(timeline.duration, result.latencyMicros.back());
    if (!outcome.events.empty())
        addIterations(outcome, &timeline);
    return timeline;
}

std::vector<QString> runDeviceLines(const RunOutcome& outcome) {
    // One short line a chip: where it ran (and why, mapped by load), and when its work moved.
    std::vector<QString> lines(static_cast<std::size_t>(outcome.devices.size()));
    for (std::size_t d = 0; d < lines.size(); ++d) {
        QString& line = lines[d];
        if (d < outcome.mappingReasons.size() && !outcome.mappingReasons[d].empty())
            line = QString::fromStdString(outcome.mappingReasons[d]);
        else if (d < outcome.physical.size())
            line = RunPanel::tr("ran on %1").arg(QString::fromStdString(outcome.physical[d]));
        const std::string& name = outcome.devices[DeviceId(static_cast<std::int32_t>(d))].name;
        for (const RunEvent& event : outcome.events) {
            // "b (vcpu2) ...", "a, b (vcpu1) ..." (two on one core), "a (vcpu1) ...; b (vcpu2)
            // ..." (both drifted).
            const bool mine = event.reason.rfind(name + " (", 0) == 0 ||
                              event.reason.find(", " + name + " (") != std::string::npos ||
                              event.reason.find("; " + name + " (") != std::string::npos;
            if (mine)
                line += (event.kind == RunEvent::Kind::DeviceFailed
                             ? RunPanel::tr(" · failed at %1")
                             : RunPanel::tr(" · re-placed at %1"))
                            .arg(event.iteration);
        }
    }
    return lines;
}

void addIterations(const RunOutcome& outcome, views::TimelineData* timeline) {
    // Every measured iteration end to end on a lane of its own, above; the traced one (the
    // last) is where the device lanes' detail sits; a marker where each change took effect.
    const std::vector<double>& latency = outcome.result.latencyMicros;
    double last = 0;
    for (std::size_t i = 0; i + 1 < latency.size(); ++i)
        last += latency[i];
    for (views::TimelineBar& bar : timeline->bars) {
        bar.lane += 1;
        bar.start += last;
        bar.end += last;
    }
    timeline->lanes.insert(timeline->lanes.begin(), RunPanel::tr("iterations"));
    std::size_t nextEvent = 0;
    int plan = 0;
    double at = 0;
    for (std::size_t i = 0; i < latency.size(); ++i) {
        const int number = static_cast<int>(i) + 1;
        while (nextEvent < outcome.events.size() && outcome.events[nextEvent].iteration == number) {
            const RunEvent& event = outcome.events[nextEvent++];
            ++plan;
            views::TimelineMarker marker = eventMarker(event, at);
            marker.tooltip = RunPanel::tr("Before iteration %1: %2\nPlanned again and swapped in "
                                          "%3 ms; latency %4 ms before, %5 ms after")
                                 .arg(number)
                                 .arg(QString::fromStdString(event.text()))
                                 .arg(event.replanMs, 0, 'f', 1)
                                 .arg(event.beforeMs, 0, 'f', 3)
                                 .arg(event.afterMs, 0, 'f', 3);
            timeline->markers.push_back(marker);
        }
        views::TimelineBar bar;
        bar.lane = 0;
        bar.start = at;
        bar.end = at + latency[i];
        bar.colour = plan % 2 == 0 ? QColor(150, 170, 200) : QColor(200, 176, 140);
        if (i % 2 == 1)
            bar.colour = bar.colour.darker(108);
        bar.label = QString::number(number);
        bar.tooltip =
            RunPanel::tr("Iteration %1: %2 ms, plan %3%4")
                .arg(number)
                .arg(latency[i] / 1000.0, 0, 'f', 3)
                .arg(plan + 1)
                .arg(i + 1 == latency.size() ? RunPanel::tr(" (traced below)") : QString());
        timeline->bars.push_back(bar);
        at += latency[i];
    }
    timeline->duration = std::max(timeline->duration, at);
}

QString runSummaryHtml(const RunOutcome& outcome) {
    const RunResult& result = outcome.result;
    QString text =
        RunPanel::tr("<p><b>Latency</b> %1 ms median (min %2, max %3) over %n iteration(s)</p>",
                     nullptr, static_cast<int>(result.latencyMicros.size()))
            .arg(median(result.latencyMicros) / 1000.0, 0, 'f', 3)
            .arg(*std::min_element(result.latencyMicros.begin(), result.latencyMicros.end()) /
                     1000.0,
                 0, 'f', 3)
            .arg(*std::max_element(result.latencyMicros.begin(), result.latencyMicros.end()) /
                     1000.0,
                 0, 'f', 3);
    if (const auto stream = streamRunTimes(outcome))
        text += RunPanel::tr("<p><b>Stream</b> of %1 batches of %2: %3 items/s; a batch's "
                             "latency %4 ms (median span in the traced run)%5</p>")
                    .arg(stream->batches)
                    .arg(stream->batch)
                    .arg(stream->itemsPerSecond, 0, 'f', 1)
                    .arg(stream->batchMicros / 1000.0, 0, 'f', 3)
                    .arg(stream->predictedMicros > 0
                             ? RunPanel::tr("; predicted %1 items/s")
                                   .arg(static_cast<double>(stream->batches * stream->batch) /
                                            (stream->predictedMicros / 1e6),
                                        0, 'f', 1)
                             : QString());
    for (const RunEvent& event : outcome.events)
        text += (event.kind == RunEvent::Kind::DeviceFailed
                     ? RunPanel::tr("<p><b>Device failed</b> before iteration %1: %2; the "
                                    "iteration ran again without it (%3 ms to plan and swap). "
                                    "Latency %4 ms before, %5 ms after.</p>")
                     : RunPanel::tr("<p><b>Re-placed</b> before iteration %1: %2 (%3 ms to plan "
                                    "and swap). Latency %4 ms before, %5 ms after.</p>"))
                    .arg(event.iteration)
                    .arg(QString::fromStdString(event.text()).toHtmlEscaped())
                    .arg(event.replanMs, 0, 'f', 1)
                    .arg(event.beforeMs, 0, 'f', 3)
                    .arg(event.afterMs, 0, 'f', 3);
    text += QStringLiteral("<table cellspacing=4><tr><th align=left>%1</th><th align=left>%2</th>"
                           "<th align=right>%3</th><th align=right>%4</th></tr>")
                .arg(RunPanel::tr("device"), RunPanel::tr("runs on"), RunPanel::tr("busy"),
                     RunPanel::tr("memory"));
    for (const StreamInfo& stream : result.streams) {
        QStringList names;
        QString where = QString::fromStdString(stream.physical);
        for (DeviceId d : stream.virtuals) {
            names << QString::fromStdString(outcome.devices[d].name);
            // Mapped by load: why there ("vcpu2 on core 1, 3 % busy").
            if (static_cast<std::size_t>(d.index) < outcome.mappingReasons.size() &&
                !outcome.mappingReasons[static_cast<std::size_t>(d.index)].empty() &&
                where == QString::fromStdString(stream.physical))
                where = QString::fromStdString(
                    outcome.mappingReasons[static_cast<std::size_t>(d.index)]);
        }
        text +=
            QStringLiteral(
                "<tr><td>%1</td><td>%2</td><td align=right>%3 ms</td><td align=right>%4</td></tr>")
                .arg(names.join(QStringLiteral(", ")), where.toHtmlEscaped())
                .arg(median(stream.busyMicros) / 1000.0, 0, 'f', 3)
                .arg(QString::fromStdString(formatBytes(stream.peakBytes)));
    }
    text += QStringLiteral("</table>");
    // Each device's busy and idle time against the prediction's: in a pipeline, the idle time
    // is the device's bubble (its fill, drain and waits).
    if (const auto check = checkPrediction(outcome); check && !check->devices.empty()) {
        text += RunPanel::tr("<p><b>Predicted</b> %1 ms, measured %2 ms; per device, its busy "
                             "time and its idle time (in a pipeline, its bubble):</p>")
                    .arg(check->predictedMs, 0, 'f', 3)
                    .arg(check->measuredMs, 0, 'f', 3);
        text += QStringLiteral("<table cellspacing=4><tr><th align=left>%1</th>"
                               "<th align=right>%2</th><th align=right>%3</th>"
                               "<th align=right>%4</th><th align=right>%5</th></tr>")
                    .arg(RunPanel::tr("device"), RunPanel::tr("busy, predicted"),
                         RunPanel::tr("measured"), RunPanel::tr("idle, predicted"),
                         RunPanel::tr("measured"));
        for (const PredictionCheck::DeviceTimes& device : check->devices)
            text += QStringLiteral("<tr><td>%1</td><td align=right>%2 ms</td><td "
                                   "align=right>%3 ms</td><td align=right>%4 ms</td><td "
                                   "align=right>%5 ms</td></tr>")
                        .arg(QString::fromStdString(device.name).toHtmlEscaped())
                        .arg(device.predictedBusyMs, 0, 'f', 3)
                        .arg(device.measuredBusyMs, 0, 'f', 3)
                        .arg(device.predictedIdleMs, 0, 'f', 3)
                        .arg(device.measuredIdleMs, 0, 'f', 3);
        text += QStringLiteral("</table>");
    }
    for (const std::string& note : outcome.ran->notes)
        text +=
            RunPanel::tr("<p>Optimised: %1</p>").arg(QString::fromStdString(note).toHtmlEscaped());
    for (const std::string& warning : outcome.warnings)
        text +=
            RunPanel::tr("<p>Note: %1</p>").arg(QString::fromStdString(warning).toHtmlEscaped());
    if (outcome.reference) {
        text += outcome.reference->ok
                    ? RunPanel::tr(
                          "<p>Outputs match the single-device reference (max abs diff %1).</p>")
                          .arg(outcome.reference->maxAbsDiff, 0, 'g', 3)
                    : RunPanel::tr("<p style='color:#b01010'>Outputs differ from the single-device "
                                   "reference: %1</p>")
                          .arg(QString::fromStdString(outcome.reference->mismatch).toHtmlEscaped());
    }
    return text;
}

} // namespace placer::gui
