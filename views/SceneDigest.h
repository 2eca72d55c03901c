// A digest of what a screenshot shows, for checking that the manual's screenshots are current
// (scripts/screenshots.sh --check): the visible widgets' kinds and texts (a report's first line),
// and the graph's drawn items (nodes with their device colours and marks, groups, frames, copy
// badges, edges). Numbers in texts are folded to '#' and the machine's name to HOST, and no
// geometry is read, so that a run's times and another machine's fonts leave it unchanged while a
// changed plan, label or panel changes it.
#pragma once

#include <QString>
#include <QStringList>

class QGraphicsScene;
class QWidget;

namespace placer::views {

/// One line per visible widget under `root` (itself included) and per item of `scene` (may be
/// null), in a stable order.
QStringList sceneLines(const QWidget* root, const QGraphicsScene* scene);
/// The SHA-1 of sceneLines, in hex.
QString sceneDigest(const QWidget* root, const QGraphicsScene* scene);

} // namespace placer::views
