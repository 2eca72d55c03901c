// File ▸ Export: one table of the kinds of export drives both the menu and the writing, so that
// a kind in the menu is a kind that writes its own format.
#pragma once

#include <QString>

#include <vector>

class QGraphicsScene;

namespace placer::views {
class PlacementDocument;
}

namespace placer::gui {

/// One entry of File ▸ Export.
struct ExportKind {
    QString id;    ///< "png", "svg", "relay", "graph", "report", "me-devices", "me-times", "netron"
    QString label; ///< the menu text, translated
    QString filter; ///< the save dialog's filter, translated
};

/// Every kind, in menu order.
std::vector<ExportKind> exportKinds();

/// What exports are made from: the plan, the canvas, and the last run's per-node times (empty
/// without a run of the current graph; -1 for nodes without a time).
struct ExportSources {
    const views::PlacementDocument* document = nullptr;
    QGraphicsScene* scene = nullptr;
    std::vector<double> nodeMillis;
    QString title;
};

/// Writes the export `kind` to `path`. False with a sentence in *error when the kind does not
/// apply (Relay text of a graph with non-Relay operators, Netron for a graph not read from ONNX,
/// run times without a run) or the file cannot be written; nothing is written then.
bool writeExport(const QString& kind, const QString& path, const ExportSources& sources,
                 QString* error);

} // namespace placer::gui
