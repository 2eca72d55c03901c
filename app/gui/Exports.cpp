// File ▸ Export: the table of export kinds, and writing each from the document and the last run.
#include "gui/Exports.h"

#include "report/PlanExport.h"
#include "views/PlacementDocument.h"

#include <QCoreApplication>
#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace placer::gui {

namespace {

/// The translation context of the export texts.
class Exports {
    Q_DECLARE_TR_FUNCTIONS(Exports)
};

bool writeBytes(const QString& path, const std::string& bytes, QString* error) {
    // Written whole or not at all: a failed export never leaves half a file behind.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(bytes.data(), static_cast<qint64>(bytes.size())) !=
            static_cast<qint64>(bytes.size()) ||
        !file.commit()) {
        *error = Exports::tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

QRectF sceneArea(const QGraphicsScene& scene) {
    return scene.itemsBoundingRect().adjusted(-20, -20, 20, 20);
}

bool writePng(const ExportSources& sources, const QString& path, QString* error) {
    const QRectF source = sceneArea(*sources.scene);
    QImage image((source.size() * 2).toSize(), QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    sources.scene->render(&painter, QRectF(), source);
    painter.end();
    if (!image.save(path, "PNG")) {
        *error = Exports::tr("Cannot write %1").arg(path);
        return false;
    }
    return true;
}

bool writeSvg(const ExportSources& sources, const QString& path, QString* error) {
    const QRectF source = sceneArea(*sources.scene);
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(sources.title);
    QPainter painter;
    if (!painter.begin(&svg)) {
        *error = Exports::tr("Cannot write %1").arg(path);
        return false;
    }
    sources.scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    if (!painter.end()) {
        *error = Exports::tr("Cannot write %1").arg(path);
        return false;
    }
    return true;
}

/// The text formats (report/PlanExport.h, as the CLI and Python write them), or why this graph
/// has none of `kind`.
bool textExport(const QString& kind, const ExportSources& sources, std::string* text,
                QString* error) {
    const auto exportKind = planExportKind(kind.toStdString());
    if (!exportKind) {
        *error = Exports::tr("Unknown export '%1'.").arg(kind);
        return false;
    }
    const views::PlacementDocument& document = *sources.document;
    PlanExportSources from;
    from.graph = &document.graph();
    from.devices = &document.devices();
    from.options = &document.options();
    from.plan = &document.plan();
    for (int d = 0; d < document.devices().size(); ++d)
        from.deviceColours.push_back(document.deviceColor(DeviceId(d)).name().toStdString());
    from.nodeMillis = sources.nodeMillis;
    if (*exportKind == PlanExportKind::ModelExplorerTimes &&
        from.nodeMillis.size() != from.graph->size()) {
        *error = Exports::tr("There are no run times to export: run the plan first (Run ▸ Run the "
                             "Plan).");
        return false;
    }
    auto rendered = renderPlanExport(*exportKind, from);
    if (!rendered) {
        *error =
            Exports::tr("Cannot export: %1").arg(QString::fromStdString(rendered.error().message));
        return false;
    }
    *text = rendered.take();
    return true;
}

} // namespace

std::vector<ExportKind> exportKinds() {
    return {
        {QStringLiteral("png"), Exports::tr("Image (PNG)…"), Exports::tr("PNG image (*.png)")},
        {QStringLiteral("svg"), Exports::tr("Vector image (SVG)…"),
         Exports::tr("SVG image (*.svg)")},
        {QStringLiteral("relay"), Exports::tr("Relay text with placement…"),
         Exports::tr("Relay text (*.relay)")},
        {QStringLiteral("graph"), Exports::tr("JSON graph…"), Exports::tr("JSON graph (*.json)")},
        {QStringLiteral("report"), Exports::tr("Plan report (JSON)…"),
         Exports::tr("Plan report (*.json)")},
        {QStringLiteral("me-devices"), Exports::tr("Model Explorer overlay: devices…"),
         Exports::tr("Model Explorer node data (*.json)")},
        {QStringLiteral("me-times"), Exports::tr("Model Explorer overlay: run times…"),
         Exports::tr("Model Explorer node data (*.json)")},
        {QStringLiteral("netron"),
         Exports::tr("Netron: ONNX model annotated with placement and times…"),
         Exports::tr("ONNX model (*.onnx)")},
    };
}

bool writeExport(const QString& kind, const QString& path, const ExportSources& sources,
                 QString* error) {
    if (kind == QLatin1String("png"))
        return writePng(sources, path, error);
    if (kind == QLatin1String("svg"))
        return writeSvg(sources, path, error);
    std::string text;
    if (!textExport(kind, sources, &text, error))
        return false;
    return writeBytes(path, text, error);
}

} // namespace placer::gui
