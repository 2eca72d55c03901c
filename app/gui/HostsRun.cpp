// Run ▸ Run on Hosts (gui/HostsRun.h).
#include "gui/HostsRun.h"

#include "ir/DeviceSet.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSysInfo>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <map>
#include <tuple>

#include <unistd.h>

namespace placer::gui {

namespace {

/// The rank a physical device name says ("rank2/vcpu1" is rank 2's; without a prefix, rank 0's).
int rankOf(const std::string& physical) {
    if (physical.rfind("rank", 0) != 0)
        return 0;
    const std::size_t slash = physical.find('/');
    if (slash == std::string::npos)
        return 0;
    try {
        return std::stoi(physical.substr(4, slash - 4));
    } catch (const std::exception&) {
        return 0;
    }
}

std::string text(const Json* value) {
    return value && value->isString() ? value->asString() : std::string();
}

double number(const Json* value) {
    if (!value || !value->isNumber())
        return 0;
    return value->isInteger() ? static_cast<double>(value->asInt()) : value->asDouble();
}

/// The host of each rank, from the report's "ranks" (empty when the run had one rank).
std::map<int, std::string> hostsOf(const Json& report) {
    std::map<int, std::string> hosts;
    if (const Json* ranks = report.find("ranks"); ranks && ranks->isArray()) {
        for (const Json& entry : ranks->items())
            hosts[static_cast<int>(entry.find("rank") ? entry.find("rank")->asInt() : 0)] =
                text(entry.find("host"));
    }
    return hosts;
}

QString ms(double value) {
    return QString::number(value, 'f', 3);
}

} // namespace

views::TimelineData hostsTimeline(const HostsRunResult& run,
                                  const std::function<QColor(const std::string&)>& colour) {
    const std::map<int, std::string> hosts = hostsOf(run.report);
    // Each virtual device's physical device and rank, from the report.
    std::map<std::string, std::string> physicalOf;
    if (const Json* devices = run.report.find("devices"); devices && devices->isArray()) {
        for (const Json& device : devices->items())
            physicalOf[text(device.find("name"))] = text(device.find("physical"));
    }
    auto rankOfDevice = [&](const std::string& device) {
        const auto found = physicalOf.find(device);
        return found == physicalOf.end() ? 0 : rankOf(found->second);
    };
    auto hostOf = [&](int rank) {
        const auto found = hosts.find(rank);
        return found == hosts.end() ? std::string() : found->second;
    };
    // The trace's processes: one per physical device, named "PHYSICAL (DEVICE)".
    std::map<std::int64_t, std::pair<std::string, std::string>> processes; // pid: physical, device
    const Json* events = run.trace.isObject() ? run.trace.find("traceEvents") : &run.trace;
    if (!events || !events->isArray())
        return {};
    for (const Json& event : events->items()) {
        if (text(event.find("ph")) != "M" || text(event.find("name")) != "process_name")
            continue;
        const Json* args = event.find("args");
        const std::string name = text(args ? args->find("name") : nullptr);
        const std::size_t open = name.rfind(" (");
        const std::int64_t pid = event.find("pid") ? event.find("pid")->asInt() : 0;
        if (open != std::string::npos && name.back() == ')')
            processes[pid] = {name.substr(0, open), name.substr(open + 2, name.size() - open - 3)};
        else
            processes[pid] = {name, name};
    }
    // Lanes, keyed so that they sort by rank (grouping by host), then compute, inputs, copies.
    using LaneKey = std::tuple<int, int, std::string>;
    std::map<LaneKey, QString> labels;
    // The host is named where the ranks are on more than one.
    bool severalHosts = false;
    for (const auto& [rank, host] : hosts)
        severalHosts = severalHosts || host != hosts.begin()->second;
    auto hostPrefix = [&](int rank) {
        if (hosts.empty())
            return QString();
        if (!severalHosts)
            return QStringLiteral("rank %1 · ").arg(rank);
        return QStringLiteral("%1 · rank %2 · ")
            .arg(QString::fromStdString(hostOf(rank)))
            .arg(rank);
    };
    auto withHost = [&](int rank) {
        return severalHosts ? QStringLiteral("rank %1 (%2)")
                                  .arg(rank)
                                  .arg(QString::fromStdString(hostOf(rank)))
                            : QStringLiteral("rank %1").arg(rank);
    };
    // A physical device without its rank, which the lane's group says.
    auto local = [](const std::string& physical) {
        const std::size_t slash = physical.find('/');
        return QString::fromStdString(physical.rfind("rank", 0) == 0 && slash != std::string::npos
                                          ? physical.substr(slash + 1)
                                          : physical);
    };
    struct PendingBar {
        LaneKey lane;
        views::TimelineBar bar;
    };
    std::vector<PendingBar> bars;
    views::TimelineData timeline;
    for (const Json& event : events->items()) {
        if (text(event.find("ph")) != "X")
            continue;
        const std::int64_t pid = event.find("pid") ? event.find("pid")->asInt() : 0;
        const auto process = processes.find(pid);
        const std::string physical = process == processes.end() ? "?" : process->second.first;
        const std::string device = process == processes.end() ? "?" : process->second.second;
        const int rank = rankOf(physical);
        const std::string category = text(event.find("cat"));
        const Json* args = event.find("args");
        views::TimelineBar bar;
        bar.start = number(event.find("ts"));
        bar.end = bar.start + number(event.find("dur"));
        const QString time = ms((bar.end - bar.start) / 1000.0);
        LaneKey lane{rank, 0, physical};
        const QString computeLabel =
            hostPrefix(rank) + HostsRunner::tr("%1 compute").arg(local(physical));
        if (category == "copy") {
            const std::string from = text(args ? args->find("from") : nullptr);
            const std::string to = text(args ? args->find("to") : nullptr);
            const std::string value = text(args ? args->find("node") : nullptr);
            bar.label = QString::fromStdString(value);
            if (from == "host" || from.empty()) {
                lane = {rank, 1, physical};
                labels[lane] =
                    hostPrefix(rank) + HostsRunner::tr("inputs → %1").arg(local(physical));
                bar.colour = colour(to).lighter(120);
                bar.tooltip = HostsRunner::tr("input %1: %2 ms").arg(bar.label, time);
            } else {
                const int fromRank = rankOfDevice(from), toRank = rankOfDevice(to);
                bar.colour = colour(from).darker(115);
                if (fromRank != toRank) {
                    // A lane per link between two ranks, under the receiving rank.
                    lane = {toRank, 3, std::to_string(fromRank)};
                    labels[lane] =
                        HostsRunner::tr("copies %1 → %2").arg(withHost(fromRank), withHost(toRank));
                } else {
                    lane = {toRank, 2, from + ">" + to};
                    labels[lane] = hostPrefix(toRank) + HostsRunner::tr("copies %1 → %2")
                                                            .arg(QString::fromStdString(from),
                                                                 QString::fromStdString(to));
                }
                bar.tooltip =
                    HostsRunner::tr("copy %1, %2 → %3, %4 bytes: %5 ms")
                        .arg(bar.label, QString::fromStdString(from), QString::fromStdString(to))
                        .arg(static_cast<qint64>(number(args ? args->find("bytes") : nullptr)))
                        .arg(time);
            }
        } else {
            labels[lane] = computeLabel;
            bar.colour = colour(device);
            if (category == "idle") {
                bar.idle = true;
                const QString waited =
                    QString::fromStdString(text(args ? args->find("waited_for") : nullptr));
                bar.label =
                    waited.isEmpty() ? QString() : HostsRunner::tr("waiting for %1").arg(waited);
                bar.tooltip = HostsRunner::tr("idle %1 ms, waiting for %2").arg(time, waited);
            } else {
                const std::string node = text(args ? args->find("node") : nullptr);
                bar.label = QString::fromStdString(node.empty() ? text(event.find("name")) : node);
                bar.tooltip = HostsRunner::tr("%1 (%2) on %3 [%4]: %5 ms")
                                  .arg(bar.label, QString::fromStdString(text(event.find("name"))),
                                       QString::fromStdString(device),
                                       QString::fromStdString(physical), time);
            }
        }
        timeline.duration = std::max(timeline.duration, bar.end);
        bars.push_back({lane, bar});
    }
    std::map<LaneKey, int> index;
    for (const auto& [key, label] : labels) {
        index[key] = static_cast<int>(timeline.lanes.size());
        timeline.lanes.push_back(label);
    }
    // Idle stretches first: drawn under the work.
    std::stable_sort(bars.begin(), bars.end(), [](const PendingBar& a, const PendingBar& b) {
        return a.bar.idle > b.bar.idle;
    });
    for (PendingBar& pending : bars) {
        pending.bar.lane = index[pending.lane];
        timeline.bars.push_back(std::move(pending.bar));
    }
    return timeline;
}

std::vector<std::pair<QString, QStringList>> hostsDeviceGroups(const HostsRunResult& run) {
    const std::map<int, std::string> hosts = hostsOf(run.report);
    std::map<int, QStringList> byRank;
    if (const Json* devices = run.report.find("devices"); devices && devices->isArray()) {
        for (const Json& device : devices->items())
            byRank[rankOf(text(device.find("physical")))]
                << QString::fromStdString(text(device.find("name")));
    }
    std::vector<std::pair<QString, QStringList>> groups;
    for (const auto& [rank, devices] : byRank) {
        const auto host = hosts.find(rank);
        groups.emplace_back(host == hosts.end() ? HostsRunner::tr("rank %1").arg(rank)
                                                : HostsRunner::tr("rank %1 on %2")
                                                      .arg(rank)
                                                      .arg(QString::fromStdString(host->second)),
                            devices);
    }
    return groups;
}

QString hostsSummaryHtml(const HostsRunResult& run) {
    const Json& report = run.report;
    const std::map<int, std::string> hosts = hostsOf(report);
    QString html;
    const Json* latency = report.find("latency_ms");
    html += HostsRunner::tr("<b>Latency</b> %1 ms median (min %2, max %3) over %4 iterations, "
                            "on %n rank(s)",
                            nullptr, run.ranks)
                .arg(ms(number(latency ? latency->find("median") : nullptr)),
                     ms(number(latency ? latency->find("min") : nullptr)),
                     ms(number(latency ? latency->find("max") : nullptr)))
                .arg(report.find("iterations") ? report.find("iterations")->asInt() : 0);
    html += QStringLiteral("<table><tr><th align=left>%1</th><th align=left>%2</th>"
                           "<th align=left>%3</th><th align=right>%4</th></tr>")
                .arg(HostsRunner::tr("device"), HostsRunner::tr("runs on"), HostsRunner::tr("host"),
                     HostsRunner::tr("busy"));
    if (const Json* devices = report.find("devices"); devices && devices->isArray()) {
        for (const Json& device : devices->items()) {
            const std::string physical = text(device.find("physical"));
            const auto host = hosts.find(rankOf(physical));
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td align=right>%4 "
                                   "ms</td></tr>")
                        .arg(QString::fromStdString(text(device.find("name"))),
                             QString::fromStdString(physical),
                             host == hosts.end() ? QString() : QString::fromStdString(host->second),
                             ms(number(device.find("busy_ms"))));
        }
    }
    html += QStringLiteral("</table>");
    if (const Json* links = report.find("links_between_ranks"); links && links->isArray()) {
        for (const Json& link : links->items()) {
            html += HostsRunner::tr("Rank %1 (%2) → rank %3 (%4): %5 copies, %6 bytes, %7 ms<br>")
                        .arg(link.find("from_rank") ? link.find("from_rank")->asInt() : 0)
                        .arg(QString::fromStdString(text(link.find("from_host"))))
                        .arg(link.find("to_rank") ? link.find("to_rank")->asInt() : 0)
                        .arg(QString::fromStdString(text(link.find("to_host"))))
                        .arg(link.find("copies") ? link.find("copies")->asInt() : 0)
                        .arg(link.find("bytes") ? link.find("bytes")->asInt() : 0)
                        .arg(ms(number(link.find("ms"))));
        }
    }
    const Json* check = report.find("reference_check");
    if (!check || !check->isObject())
        html += HostsRunner::tr("Outputs not checked against a reference.");
    else if (check->find("ok") && check->find("ok")->asBool())
        html += HostsRunner::tr("Outputs match the single-device reference (max abs diff %1).")
                    .arg(number(check->find("max_abs_diff")));
    else
        html += HostsRunner::tr("<b>Outputs differ from the single-device reference</b>: %1")
                    .arg(QString::fromStdString(text(check->find("mismatch"))).toHtmlEscaped());
    return html;
}

HostsRunner::HostsRunner(QObject* parent) : QObject(parent) {}

HostsRunner::~HostsRunner() {
    if (!running())
        return;
    // As cancel(): mpirun ends its ranks on SIGTERM; killed outright it could not, and they
    // would run on.
    m_process->disconnect(this);
    m_process->terminate();
    if (!m_process->waitForFinished(5000)) {
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

QStringList HostsRunner::commandLine(const HostsRunRequest& request, const QString& folder) {
    QStringList words{request.mpirun};
    // More ranks than cores on this machine is allowed (each rank's devices are threads); the
    // ranks' threads are not bound to one core each, which would serialise a rank's devices.
    words << QStringLiteral("--oversubscribe") << QStringLiteral("--bind-to")
          << QStringLiteral("none") << QStringLiteral("--timeout")
          << QString::number(request.timeoutSeconds) << QStringLiteral("-np")
          << QString::number(request.ranks);
    if (!request.hostFile.isEmpty())
        words << QStringLiteral("--hostfile") << request.hostFile;
    QString placer = request.placer;
    if (placer.isEmpty())
        placer = qEnvironmentVariable("PLACER_PROGRAM");
    if (placer.isEmpty()) {
        const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/placer");
        placer = QFile::exists(beside) ? beside : QStringLiteral("placer");
    }
    words << placer;
    words << request.runWords;
    for (const QString& map : request.maps)
        words << QStringLiteral("--map") << map;
    words << QStringLiteral("--json") << QStringLiteral("-o")
          << QDir(folder).filePath(QStringLiteral("report.json")) << QStringLiteral("--trace")
          << QDir(folder).filePath(QStringLiteral("trace.json")) << QStringLiteral("--no-record");
    return words;
}

void HostsRunner::start(const HostsRunRequest& request) {
    if (running()) {
        emit failed(tr("A run on hosts is already going on."));
        return;
    }
    m_folder = std::make_unique<QTemporaryDir>();
    if (!m_folder->isValid()) {
        emit failed(
            tr("Cannot make a folder for the run's report: %1").arg(m_folder->errorString()));
        return;
    }
    m_request = request;
    m_output.clear();
    m_cancelling = false;
    delete m_process;
    m_process = new QProcess(this);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    if (::geteuid() == 0) {
        // Open MPI asks for consent to run as root (containers, CI).
        environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
        environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
    }
    m_process->setProcessEnvironment(environment);
    connect(m_process, &QProcess::readyRead, this, [this] {
        while (m_process->canReadLine()) {
            const QString line = QString::fromLocal8Bit(m_process->readLine()).trimmed();
            m_output += line + QLatin1Char('\n');
            if (!line.isEmpty())
                emit progress(line);
        }
    });
    connect(m_process, &QProcess::finished, this, &HostsRunner::ended);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            emit failed(tr("Cannot start %1: %2 (is Open MPI installed?)")
                            .arg(m_request.mpirun, m_process->errorString()));
    });
    QStringList words = commandLine(request, m_folder->path());
    const QString program = words.takeFirst();
    m_process->start(program, words);
}

void HostsRunner::cancel() {
    if (!running())
        return;
    m_cancelling = true;
    // mpirun forwards the signal to every rank and ends them; a rank that does not end is
    // killed with mpirun.
    m_process->terminate();
    QPointer<QProcess> process = m_process;
    QTimer::singleShot(5000, this, [process] {
        if (process && process->state() != QProcess::NotRunning)
            process->kill();
    });
}

void HostsRunner::ended(int exitCode, QProcess::ExitStatus status) {
    const QByteArray rest = m_process->readAll();
    m_output += QString::fromLocal8Bit(rest);
    if (m_cancelling) {
        emit cancelled();
        return;
    }
    auto lastLines = [this] {
        QStringList lines = m_output.trimmed().split(QLatin1Char('\n'));
        if (lines.size() > 12)
            lines = lines.mid(lines.size() - 12);
        return lines.join(QLatin1Char('\n'));
    };
    if (status != QProcess::NormalExit || exitCode != 0) {
        emit failed(tr("mpirun ended with status %1:\n%2").arg(exitCode).arg(lastLines()));
        return;
    }
    auto read = [this](const QString& name, Json* into, QString* why) {
        QFile file(QDir(m_folder->path()).filePath(name));
        if (!file.open(QIODevice::ReadOnly)) {
            *why = tr("the run wrote no %1").arg(name);
            return false;
        }
        auto parsed = Json::parse(file.readAll().toStdString(), name.toStdString());
        if (!parsed) {
            *why = QString::fromStdString(parsed.error().toString());
            return false;
        }
        *into = parsed.take();
        return true;
    };
    auto result = std::make_shared<HostsRunResult>();
    result->ranks = m_request.ranks;
    QString why;
    if (!read(QStringLiteral("report.json"), &result->report, &why) ||
        !read(QStringLiteral("trace.json"), &result->trace, &why)) {
        emit failed(tr("The run on hosts ended, but %1.\n%2").arg(why, lastLines()));
        return;
    }
    emit finished(result);
}

int HostFile::knownSlots() const {
    int total = 0;
    for (const Host& host : hosts)
        total += host.slotCount;
    return total;
}

bool HostFile::slotsKnown() const {
    return !hosts.empty() && std::all_of(hosts.begin(), hosts.end(),
                                         [](const Host& host) { return host.slotCount > 0; });
}

QString HostFile::hostOfRank(int rank) const {
    for (const Host& host : hosts) {
        if (host.slotCount <= 0) // as many as its cores: one at least
            return rank == 0 ? host.name : QString();
        if (rank < host.slotCount)
            return host.name;
        rank -= host.slotCount;
    }
    return {};
}

HostFile readHostFile(const QString& path) {
    HostFile file;
    // Read as the path is typed: never a device, a folder or anything larger than host files
    // are (a read of /dev/zero would not end).
    const QFileInfo info(path);
    if (info.exists() && (!info.isFile() || info.size() > (1 << 20))) {
        file.error = HostsDialog::tr("%1 is not a host file (not a regular file of at most 1 MiB)")
                         .arg(path);
        return file;
    }
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly | QIODevice::Text)) {
        file.error =
            HostsDialog::tr("Cannot read the host file %1: %2").arg(path, in.errorString());
        return file;
    }
    const QString name = QFileInfo(path).fileName();
    // Per host: its index in `hosts`, and whether a line of it left its slots to mpirun.
    std::map<QString, std::pair<std::size_t, bool>> seen;
    for (int line = 1; !in.atEnd(); ++line) {
        QString text = QString::fromUtf8(in.readLine());
        if (const qsizetype hash = text.indexOf(QLatin1Char('#')); hash >= 0)
            text.truncate(hash);
        text.replace(QRegularExpression(QStringLiteral("\\s*=\\s*")), QStringLiteral("="));
        const QStringList words =
            text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
        if (words.isEmpty())
            continue;
        const auto at = [&](const QString& what) {
            return HostsDialog::tr("%1, line %2: %3").arg(name).arg(line).arg(what);
        };
        if (words[0].contains(QLatin1Char('='))) {
            file.error =
                at(HostsDialog::tr("the line starts with \"%1\", not a host name").arg(words[0]));
            return file;
        }
        int given = 0;
        for (qsizetype w = 1; w < words.size(); ++w) {
            const qsizetype equals = words[w].indexOf(QLatin1Char('='));
            const QString key = words[w].left(equals);
            const QString value = equals < 0 ? QString() : words[w].mid(equals + 1);
            // Open MPI's names for a host's slots, its limit, and the user to log in as.
            const bool isSlots = key == QLatin1String("slots") || key == QLatin1String("count") ||
                                 key == QLatin1String("cpu");
            const bool isOther = key == QLatin1String("max_slots") ||
                                 key == QLatin1String("max-slots") ||
                                 key == QLatin1String("slots_max") ||
                                 key == QLatin1String("username") || key == QLatin1String("user");
            if (!isSlots && !isOther) {
                file.error =
                    at(HostsDialog::tr("\"%1\" is not slots=N or max_slots=N").arg(words[w]));
                return file;
            }
            bool number = false;
            const int n = value.toInt(&number);
            if (isSlots && (!number || n < 1)) {
                file.error = at(
                    HostsDialog::tr("\"%1\" is not a number of slots (1 or more)").arg(words[w]));
                return file;
            }
            if (isSlots)
                given += n;
        }
        auto [it, added] = seen.emplace(words[0], std::pair(file.hosts.size(), given == 0));
        if (added) {
            file.hosts.push_back({words[0], given});
        } else {
            it->second.second = it->second.second || given == 0;
            file.hosts[it->second.first].slotCount += given;
        }
    }
    for (const auto& [host, where] : seen) {
        if (where.second)
            file.hosts[where.first].slotCount = 0; // a line of it without slots: its cores
    }
    if (file.hosts.empty())
        file.error = HostsDialog::tr("%1 names no host").arg(name);
    return file;
}

HostsDialog::HostsDialog(const DeviceSet& devices, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Run on Hosts"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("The plan runs under mpirun: one placer process (rank) per slot, each virtual device "
           "on the rank and physical device chosen below. Copies between ranks go over MPI. The "
           "model file must be readable at the same path on every host."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    auto* local = new QRadioButton(tr("This machine"), this);
    local->setObjectName(QStringLiteral("thisMachine"));
    local->setChecked(true);
    m_useHostFile = new QRadioButton(tr("Hosts in a file"), this);
    m_useHostFile->setObjectName(QStringLiteral("useHostFile"));
    m_ranks = new QSpinBox(this);
    m_ranks->setObjectName(QStringLiteral("ranks"));
    m_ranks->setRange(1, 256);
    m_ranks->setValue(std::max(2, std::min(devices.size(), 256)));
    m_hostFile = new QLineEdit(this);
    m_hostFile->setObjectName(QStringLiteral("hostFile"));
    m_hostFile->setPlaceholderText(tr("an Open MPI host file: one host a line, slots=N"));
    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Host file"));
        if (!path.isEmpty()) {
            m_hostFile->setText(path);
            m_useHostFile->setChecked(true);
        }
    });
    connect(m_hostFile, &QLineEdit::textEdited, this, [this] { m_useHostFile->setChecked(true); });
    auto* hostRow = new QHBoxLayout;
    hostRow->addWidget(m_hostFile);
    hostRow->addWidget(browse);
    m_hostSummary = new QLabel(this);
    m_hostSummary->setObjectName(QStringLiteral("hostSummary"));
    m_hostSummary->setWordWrap(true);
    m_hostSummary->setTextFormat(Qt::RichText);
    form->addRow(local);
    form->addRow(tr("Ranks:"), m_ranks);
    form->addRow(m_useHostFile);
    form->addRow(hostRow);
    form->addRow(m_hostSummary);
    layout->addLayout(form);

    m_mapping = new QTableWidget(devices.size(), 5, this);
    m_mapping->setObjectName(QStringLiteral("mapping"));
    m_mapping->setHorizontalHeaderLabels(
        {tr("Device"), tr("Kind"), tr("Rank"), tr("Physical device there"), tr("Host")});
    m_mapping->verticalHeader()->hide();
    m_mapping->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_mapping->horizontalHeader()->setStretchLastSection(true);
    std::map<int, int> vcpus; // per rank: the virtual CPUs given so far
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices.devices()[static_cast<std::size_t>(d)];
        auto* name = new QTableWidgetItem(QString::fromStdString(device.name));
        name->setFlags(name->flags() & ~Qt::ItemIsEditable);
        auto* kind = new QTableWidgetItem(QString::fromUtf8(deviceKindName(device.kind).data()));
        kind->setFlags(kind->flags() & ~Qt::ItemIsEditable);
        m_mapping->setItem(d, 0, name);
        m_mapping->setItem(d, 1, kind);
        // By default the host device stays on rank 0 and the others go round the ranks.
        auto* rank = new QSpinBox(m_mapping);
        rank->setRange(0, m_ranks->value() - 1);
        const bool host = DeviceId(d) == devices.hostDevice();
        rank->setValue(host ? 0 : d % m_ranks->value());
        m_mapping->setCellWidget(d, 2, rank);
        connect(rank, &QSpinBox::valueChanged, this, [this] { showHosts(); });
        auto* where = new QTableWidgetItem;
        where->setFlags(where->flags() & ~Qt::ItemIsEditable);
        m_mapping->setItem(d, 4, where);
        auto* physical = new QComboBox(m_mapping);
        physical->setEditable(true);
        physical->addItems({QStringLiteral("cpu"), QStringLiteral("vcpu1"), QStringLiteral("vcpu2"),
                            QStringLiteral("cuda:0"), QStringLiteral("cuda:1")});
        if (device.kind == DeviceKind::Cpu)
            physical->setCurrentText(QStringLiteral("cpu"));
        else if (device.kind == DeviceKind::Cuda)
            physical->setCurrentText(QStringLiteral("cuda:%1").arg(device.ordinal));
        else
            physical->setCurrentText(QStringLiteral("vcpu%1").arg(++vcpus[rank->value()]));
        m_mapping->setCellWidget(d, 3, physical);
    }
    // The rank's spin box as wide as it needs (a column sized to contents sees only the header).
    m_mapping->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Interactive);
    m_mapping->setColumnWidth(2, QSpinBox().sizeHint().width() + 12);
    connect(m_ranks, &QSpinBox::valueChanged, this, [this](int ranks) {
        for (int row = 0; row < m_mapping->rowCount(); ++row) {
            if (auto* rank = qobject_cast<QSpinBox*>(m_mapping->cellWidget(row, 2)))
                rank->setRange(0, ranks - 1);
        }
        showHosts();
    });
    layout->addWidget(m_mapping);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_run = buttons->button(QDialogButtonBox::Ok);
    m_run->setText(tr("Run"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    connect(m_hostFile, &QLineEdit::textChanged, this, [this] { hostsChanged(); });
    connect(m_useHostFile, &QRadioButton::toggled, this, [this] { hostsChanged(); });
    hostsChanged();
    resize(640, 440);
}

void HostsDialog::hostsChanged() {
    m_hosts = HostFile{};
    const QString path = m_hostFile->text().trimmed();
    if (m_useHostFile->isChecked() && !path.isEmpty()) {
        m_hosts = readHostFile(path);
        // One rank a slot, as mpirun would start without -np.
        if (m_hosts.error.isEmpty() && m_hosts.slotsKnown())
            m_ranks->setValue(std::min(m_hosts.knownSlots(), m_ranks->maximum()));
    }
    showHosts();
}

void HostsDialog::showHosts() {
    const bool fromFile = m_useHostFile->isChecked();
    const QString path = m_hostFile->text().trimmed();
    const int ranks = m_ranks->value();
    QString summary;
    bool usable = true;
    if (!fromFile) {
        summary =
            tr("Every rank on this machine (%1).").arg(QSysInfo::machineHostName().toHtmlEscaped());
    } else if (path.isEmpty()) {
        summary = tr("Choose a host file.");
        usable = false;
    } else if (!m_hosts.error.isEmpty()) {
        summary = QStringLiteral("<span style=\"color:#b00020\">%1</span>")
                      .arg(m_hosts.error.toHtmlEscaped());
        usable = false;
    } else {
        QStringList hosts;
        for (const HostFile::Host& host : m_hosts.hosts)
            hosts << (host.slotCount > 0
                          ? tr("%1 (%n slot(s))", nullptr, host.slotCount)
                                .arg(host.name.toHtmlEscaped())
                          : tr("%1 (a slot per core)").arg(host.name.toHtmlEscaped()));
        summary = tr("%n host(s): %1.", nullptr, static_cast<int>(m_hosts.hosts.size()))
                      .arg(hosts.join(QStringLiteral(", ")));
        if (m_hosts.slotsKnown() && ranks > m_hosts.knownSlots())
            summary += QLatin1Char(' ') +
                       tr("%1 ranks on %2 slots: mpirun starts more than one rank on a slot.")
                           .arg(ranks)
                           .arg(m_hosts.knownSlots());
    }
    m_hostSummary->setText(summary);
    if (m_run)
        m_run->setEnabled(usable);
    for (int row = 0; row < m_mapping->rowCount(); ++row) {
        const auto* rank = qobject_cast<QSpinBox*>(m_mapping->cellWidget(row, 2));
        QTableWidgetItem* host = m_mapping->item(row, 4);
        if (!rank || !host)
            continue;
        QString where;
        if (!fromFile)
            where = QSysInfo::machineHostName();
        else if (usable)
            where = m_hosts.hostOfRank(rank->value());
        host->setText(where.isEmpty() && fromFile && usable ? tr("chosen by mpirun") : where);
    }
}

HostsRunRequest HostsDialog::request() const {
    HostsRunRequest request;
    request.ranks = m_ranks->value();
    if (m_useHostFile->isChecked())
        request.hostFile = m_hostFile->text().trimmed();
    for (int row = 0; row < m_mapping->rowCount(); ++row) {
        const auto* rank = qobject_cast<QSpinBox*>(m_mapping->cellWidget(row, 2));
        const auto* physical = qobject_cast<QComboBox*>(m_mapping->cellWidget(row, 3));
        if (!rank || !physical)
            continue;
        const QString where = physical->currentText().trimmed();
        request.maps << QStringLiteral("%1=%2%3").arg(
            m_mapping->item(row, 0)->text(),
            rank->value() == 0 ? QString() : QStringLiteral("rank%1/").arg(rank->value()), where);
    }
    return request;
}

} // namespace placer::gui
