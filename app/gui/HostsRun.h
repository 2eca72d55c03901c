// Run ▸ Run on Hosts…: the window's plan run by `placer run` under `mpirun`, each virtual device
// on the rank (and the physical device there) the user maps it to, on this machine or on the
// hosts of a host file, with progress and cancel. MPI carries every byte between the ranks; the
// window only starts mpirun and reads back what rank 0 gathered: the run report and the trace,
// shown in the Run panel and the timeline with the lanes grouped by host.
#pragma once

#include "report/RunReport.h"
#include "views/TimelineWidget.h"

#include <QDialog>
#include <QObject>
#include <QProcess>
#include <QStringList>

#include <functional>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableWidget;
class QTemporaryDir;

namespace placer {
class DeviceSet;
}

namespace placer::gui {

struct HostsRunRequest {
    QString mpirun = QStringLiteral("mpirun");
    /// The placer program every rank runs; empty: $PLACER_PROGRAM, else the one beside this
    /// program, else placer on the PATH.
    QString placer;
    /// Processes to start: slots on this machine, or taken from the host file.
    int ranks = 2;
    /// mpirun's --hostfile; empty: every rank on this machine.
    QString hostFile;
    /// `run MODEL OPTIONS...`: what follows `placer` (MainWindow::planCommandLine's words).
    QStringList runWords;
    /// "b=rank1/vcpu1": a virtual device on a rank's physical device, one per device.
    QStringList maps;
    /// mpirun --timeout: the job ends past it, every rank with it.
    int timeoutSeconds = 600;
};

struct HostsRunResult {
    Json report;
    Json trace;
    int ranks = 0;
};

/// An Open MPI host file as mpirun reads it: the hosts in order, each with its slots (a host on
/// several lines once, its slots added; 0 where no line gives them: mpirun then counts the host's
/// cores), or why it cannot be read, with the file and line.
struct HostFile {
    struct Host {
        QString name;
        int slotCount = 0;
    };
    std::vector<Host> hosts;
    QString error;

    /// The slots of the hosts that give theirs.
    int knownSlots() const;
    /// Whether every host gives its slots.
    bool slotsKnown() const;
    /// The host mpirun starts rank `rank` on, filling each host's slots in order (its default
    /// mapping by slot); empty where that depends on a host's cores, or past the slots.
    QString hostOfRank(int rank) const;
};
HostFile readHostFile(const QString& path);

/// The timeline of a run on several ranks from its Chrome trace and report: lanes grouped by
/// host and rank, a compute lane per physical device, a lane per link between two ranks for the
/// copies over it (and one per pair of devices for copies within a rank), inputs; idle
/// stretches hatched. `colour` gives a virtual device's colour by name.
views::TimelineData hostsTimeline(const HostsRunResult& run,
                                  const std::function<QColor(const std::string&)>& colour);
/// The devices of such a run by where they ran: per rank in order, its heading ("rank 1", with
/// the host where the ranks are on several hosts) and the virtual devices on it.
std::vector<std::pair<QString, QStringList>> hostsDeviceGroups(const HostsRunResult& run);
/// The Run panel's summary of such a run: latency, each device with its rank, host and busy
/// time, the links between ranks, the reference check.
QString hostsSummaryHtml(const HostsRunResult& run);

/// Starts and watches one mpirun at a time.
class HostsRunner : public QObject {
    Q_OBJECT

public:
    explicit HostsRunner(QObject* parent = nullptr);
    ~HostsRunner() override;

    bool running() const { return m_process && m_process->state() != QProcess::NotRunning; }
    /// The program and arguments start() runs for `request`, report and trace written to
    /// `folder`.
    static QStringList commandLine(const HostsRunRequest& request, const QString& folder);
    /// The output of the last run so far (mpirun's and every rank's, interleaved).
    const QString& output() const { return m_output; }

public slots:
    /// Starts the run; failed() when it cannot start or another is running.
    void start(const HostsRunRequest& request);
    /// Ends the run on every rank: mpirun is asked to stop (it stops its ranks), and killed
    /// with them if it has not within five seconds.
    void cancel();

signals:
    /// A line of output from mpirun or a rank.
    void progress(const QString& line);
    void finished(std::shared_ptr<const HostsRunResult> result);
    void failed(const QString& message);
    void cancelled();

private:
    void ended(int exitCode, QProcess::ExitStatus status);

    QProcess* m_process = nullptr;
    std::unique_ptr<QTemporaryDir> m_folder;
    HostsRunRequest m_request;
    QString m_output;
    bool m_cancelling = false;
};

/// Asks where the run goes: this machine with N ranks or a host file, and for each virtual
/// device its rank and the physical device on that rank.
class HostsDialog : public QDialog {
    Q_OBJECT

public:
    HostsDialog(const DeviceSet& devices, QWidget* parent = nullptr);

    QSpinBox* ranks() const { return m_ranks; }
    QRadioButton* useHostFile() const { return m_useHostFile; }
    QLineEdit* hostFile() const { return m_hostFile; }
    /// Per device: name, kind, rank (a spin box), physical device (an editable combo box).
    QTableWidget* mapping() const { return m_mapping; }
    /// What the host file holds (its hosts and slots) or why it cannot be used.
    QLabel* hostSummary() const { return m_hostSummary; }
    /// The ranks, host file and maps chosen (runWords left to the caller).
    HostsRunRequest request() const;

private:
    /// Reads the host file again where one is chosen: its summary, the ranks set to its slots,
    /// Run allowed only with a file mpirun can use; each rank's host in the mapping.
    void hostsChanged();
    /// The mapping's host column from each device's rank.
    void showHosts();

    QSpinBox* m_ranks;
    QRadioButton* m_useHostFile;
    QLineEdit* m_hostFile;
    QLabel* m_hostSummary;
    QTableWidget* m_mapping;
    QPushButton* m_run = nullptr;
    HostFile m_hosts;
};

} // namespace placer::gui
