// The placer processes (ranks) of an mpirun job still alive, found by a word of their command
// line: for the MPI tests that check that no rank is left behind.
#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>
#include <QString>

#include <sys/types.h>

namespace placer::test {

/// The processes whose program is a `placer` and whose command line holds `marker`.
inline QList<pid_t> processesWith(const QString& marker) {
    QList<pid_t> pids;
    for (const QString& entry : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool number = false;
        const pid_t pid = entry.toInt(&number);
        if (!number)
            continue;
        QFile cmdline("/proc/" + entry + "/cmdline");
        if (!cmdline.open(QIODevice::ReadOnly))
            continue;
        const QByteArray text = cmdline.readAll();
        // placer itself (its first word), not mpirun, whose command line holds the same.
        const QByteArray program = text.left(text.indexOf('\0'));
        if (program.endsWith("/placer") && text.contains(marker.toUtf8()))
            pids.append(pid);
    }
    return pids;
}

} // namespace placer::test
