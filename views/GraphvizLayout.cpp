// Laying graphs out with Graphviz dot behind one lock, every C handle owned.
#include "views/GraphvizLayout.h"

#include <graphviz/graphviz_version.h>
#include <graphviz/gvc.h>

#include <QCryptographicHash>
#include <QDataStream>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSaveFile>
#include <QStandardPaths>

#include <memory>
#include <mutex>
#include <string>

namespace placer::views {

namespace {

std::mutex& graphvizLock() {
    static std::mutex lock;
    return lock;
}

struct ContextDeleter {
    void operator()(GVC_t* context) const { gvFreeContext(context); }
};
struct GraphDeleter {
    void operator()(Agraph_t* graph) const { agclose(graph); }
};

/// A laid-out graph: frees the layout before the graph.
class LaidOutGraph {
public:
    LaidOutGraph(GVC_t* context, Agraph_t* graph) : m_context(context), m_graph(graph) {}
    ~LaidOutGraph() {
        if (m_laidOut)
            gvFreeLayout(m_context, m_graph);
    }
    LaidOutGraph(const LaidOutGraph&) = delete;
    LaidOutGraph& operator=(const LaidOutGraph&) = delete;
    bool layout() {
        m_laidOut = gvLayout(m_context, m_graph, "dot") == 0;
        return m_laidOut;
    }

private:
    GVC_t* m_context;
    Agraph_t* m_graph;
    bool m_laidOut = false;
};

void set(void* object, const char* name, const std::string& value) {
    agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.c_str()),
              const_cast<char*>(""));
}

} // namespace

LayoutResult computeLayout(const LayoutRequest& request) {
    LayoutResult result;
    QElapsedTimer timer;
    timer.start();
    std::lock_guard lock(graphvizLock());
    std::unique_ptr<GVC_t, ContextDeleter> context(gvContext());
    if (!context) {
        result.error = QStringLiteral("Graphviz could not start");
        return result;
    }
    std::unique_ptr<Agraph_t, GraphDeleter> graph(
        agopen(const_cast<char*>("g"), Agdirected, nullptr));
    set(graph.get(), "rankdir", "TB");
    set(graph.get(), "nodesep", "0.25");
    set(graph.get(), "ranksep", "0.35");
    set(graph.get(), "splines", "spline");
    if (request.boundEffort) {
        // Bounded network simplex: far faster on graphs with long skip edges.
        set(graph.get(), "nslimit", "2");
        set(graph.get(), "nslimit1", "2");
        set(graph.get(), "mclimit", "0.5");
    }
    agattr(graph.get(), AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(graph.get(), AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(graph.get(), AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    std::vector<Agnode_t*> nodes;
    nodes.reserve(request.nodeSizes.size());
    for (std::size_t i = 0; i < request.nodeSizes.size(); ++i) {
        const std::string name = "n" + std::to_string(i);
        Agnode_t* node = agnode(graph.get(), const_cast<char*>(name.c_str()), 1);
        set(node, "width", std::to_string(request.nodeSizes[i].width() / 72.0));
        set(node, "height", std::to_string(request.nodeSizes[i].height() / 72.0));
        nodes.push_back(node);
    }
    std::vector<Agedge_t*> edges;
    edges.reserve(request.edges.size());
    for (std::size_t i = 0; i < request.edges.size(); ++i) {
        const auto [from, to] = request.edges[i];
        const std::string name = "e" + std::to_string(i);
        edges.push_back(agedge(graph.get(), nodes[static_cast<std::size_t>(from)],
                               nodes[static_cast<std::size_t>(to)], const_cast<char*>(name.c_str()),
                               1));
    }
    LaidOutGraph laidOut(context.get(), graph.get());
    if (!laidOut.layout()) {
        result.error = QStringLiteral("Graphviz dot failed to lay out the graph");
        return result;
    }
    const boxf box = GD_bb(graph.get());
    const double top = box.UR.y;
    auto point = [top](pointf p) { return QPointF(p.x, top - p.y); };
    result.bounds = QRectF(QPointF(box.LL.x, 0), QPointF(box.UR.x, top - box.LL.y));
    result.nodeCenters.reserve(nodes.size());
    for (Agnode_t* node : nodes)
        result.nodeCenters.push_back(point(ND_coord(node)));
    result.edgePaths.reserve(edges.size());
    for (Agedge_t* edge : edges) {
        QPainterPath path;
        const splines* spl = ED_spl(edge);
        if (spl && spl->size > 0 && spl->list[0].size > 0) {
            const bezier& b = spl->list[0];
            if (b.sflag)
                path.moveTo(point(b.sp)), path.lineTo(point(b.list[0]));
            else
                path.moveTo(point(b.list[0]));
            for (int i = 1; i + 2 < b.size; i += 3)
                path.cubicTo(point(b.list[i]), point(b.list[i + 1]), point(b.list[i + 2]));
            if (b.eflag)
                path.lineTo(point(b.ep));
        } else {
            path.moveTo(point(ND_coord(agtail(edge))));
            path.lineTo(point(ND_coord(aghead(edge))));
        }
        result.edgePaths.push_back(path);
    }
    result.seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    return result;
}

} // namespace placer::views

namespace placer::views {

namespace {

constexpr quint32 kCacheFormat = 1;

QByteArray requestKey(const LayoutRequest& request) {
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray data;
    QDataStream out(&data, QIODevice::WriteOnly);
    out << kCacheFormat << QByteArray(PACKAGE_VERSION) << request.boundEffort
        << quint64(request.nodeSizes.size());
    for (const QSizeF& size : request.nodeSizes)
        out << size;
    out << quint64(request.edges.size());
    for (const auto& [from, to] : request.edges)
        out << qint32(from) << qint32(to);
    hash.addData(data);
    return hash.result().toHex();
}

} // namespace

LayoutResult cachedLayout(const LayoutRequest& request, const QString& cacheDir, bool* fromCache) {
    const QString folder = cacheDir.isEmpty()
                               ? QStandardPaths::writableLocation(QStandardPaths::CacheLocation) +
                                     QStringLiteral("/layouts")
                               : cacheDir;
    const QString path = folder + QLatin1Char('/') + QString::fromLatin1(requestKey(request)) +
                         QStringLiteral(".layout");
    if (fromCache)
        *fromCache = false;
    QFile cached(path);
    if (cached.open(QIODevice::ReadOnly)) {
        QDataStream in(&cached);
        LayoutResult result;
        quint32 format = 0;
        QList<QPointF> centers;
        QList<QPainterPath> paths;
        in >> format >> result.bounds >> centers >> paths;
        if (in.status() == QDataStream::Ok && format == kCacheFormat &&
            static_cast<std::size_t>(centers.size()) == request.nodeSizes.size() &&
            static_cast<std::size_t>(paths.size()) == request.edges.size()) {
            result.nodeCenters.assign(centers.begin(), centers.end());
            result.edgePaths.assign(paths.begin(), paths.end());
            if (fromCache)
                *fromCache = true;
            return result;
        }
    }
    LayoutResult result = computeLayout(request);
    if (result.error.isEmpty() && QDir().mkpath(folder)) {
        QSaveFile file(path); // a crash never leaves half a cache entry
        if (file.open(QIODevice::WriteOnly)) {
            QDataStream out(&file);
            out << kCacheFormat << result.bounds
                << QList<QPointF>(result.nodeCenters.begin(), result.nodeCenters.end())
                << QList<QPainterPath>(result.edgePaths.begin(), result.edgePaths.end());
            file.commit();
        }
    }
    return result;
}

} // namespace placer::views
