// The canvas view: zoom (wheel, pinch, keys), pan (middle button or space+drag), fit, rubber-band
// selection, and drops of device chips onto nodes.
#pragma once

#include "ir/Ids.h"

#include <QGraphicsView>

#include <vector>

namespace placer::views {

class GraphScene;
class MiniMap;

/// The MIME type of a dragged device chip; the data is the device's name in UTF-8.
inline constexpr const char* kDeviceMimeType = "application/x-placement-explorer-device";
/// The MIME type of dragged nodes; the data is their indices, comma-separated.
inline constexpr const char* kNodesMimeType = "application/x-placement-explorer-nodes";

/// The node indices of a kNodesMimeType payload.
std::vector<NodeId> decodeNodes(const QByteArray& data);

class GraphView : public QGraphicsView {
    Q_OBJECT

public:
    explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);

    GraphScene* graphScene() const { return m_scene; }
    MiniMap* miniMap() const { return m_miniMap; }
    double zoom() const { return transform().m11(); }

public slots:
    void zoomIn();
    void zoomOut();
    void fitAll();
    void fitSelection();
    /// Centres the view on a node and selects it.
    void showNode(NodeId node);
    /// Shows `area` (an opened group's frame): centred where it fits at this zoom; otherwise
    /// zoomed in to read and its top shown.
    void showArea(const QRectF& area);

signals:
    /// A device chip was dropped on `nodes` (the node under the cursor, or the whole selection
    /// when that node is part of it).
    void deviceDropped(const QString& device, const std::vector<NodeId>& nodes);
    /// A collapsed group was double-clicked.
    void expandRequested(const QString& scope);
    /// showNode() was asked for a node inside a collapsed group (LayoutController::reveal).
    void revealRequested(NodeId node);
    /// The title of an open group's frame was double-clicked.
    void collapseRequested(const QString& scope);

protected:
    void wheelEvent(QWheelEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    void keyReleaseEvent(QKeyEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void dragEnterEvent(QDragEnterEvent*) override;
    void dragMoveEvent(QDragMoveEvent*) override;
    void dropEvent(QDropEvent*) override;
    bool viewportEvent(QEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    void scaleBy(double factor);
    std::vector<NodeId> dropTargets(const QPoint& position) const;
    void startNodeDrag();

    GraphScene* m_scene;
    MiniMap* m_miniMap;
    bool m_panning = false;
    bool m_spaceHeld = false;
    QPoint m_lastPan;
    QPoint m_pressAt;
    bool m_pressedOnNode = false;
};

} // namespace placer::views
