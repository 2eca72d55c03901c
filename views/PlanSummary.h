// The status bar's line on a plan: copies and the bytes they move, peak memory per device (of its
// capacity), conflicts, and the time planning took.
#pragma once

#include <QString>

namespace placer::views {

class PlacementDocument;

/// "2 copies, 32.0 KiB copied  ·  peak memory: cpu 48.7 KiB, gpu 160.3 KiB  ·  0 conflicts  ·
/// planned in 0.07 ms".
QString planSummary(const PlacementDocument& document);

} // namespace placer::views
