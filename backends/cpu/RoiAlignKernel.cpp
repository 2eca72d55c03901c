// RoiAlign on the CPU in float32: each region's sampling points (their four bilinear taps and
// weights) are computed once and shared by every channel, where the shared functor
// (kernels/LayerFunctors.h RoiAlign) computes them again for each output element. The
// arithmetic and the order of sums are the functor's, so both give the same bits.
#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "kernels/IndexingPlan.h"

#include <cmath>
#include <variant>

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

class RoiAlignKernel final : public Kernel {
public:
    RoiAlignKernel(const functors::RoiAlign& op, i64 regions, bool int32Batches)
        : m_op(op), m_regions(regions), m_int32Batches(int32Batches) {}

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const float* x = reinterpret_cast<const float*>(inputs[0]);
        const float* rois = reinterpret_cast<const float*>(inputs[1]);
        float* out = reinterpret_cast<float*>(outputs[0]);
        const functors::RoiAlign& op = m_op;
        const i64 bins = op.outHeight * op.outWidth, planeSize = op.height * op.width;
        for (i64 roi = 0; roi < m_regions; ++roi) {
            const i64 batch = m_int32Batches
                                  ? reinterpret_cast<const std::int32_t*>(inputs[2])[roi]
                                  : reinterpret_cast<const std::int64_t*>(inputs[2])[roi];
            const i64 samples = sampleRegion(&rois[roi * 4]);
            const double count = samples > 1 ? static_cast<double>(samples) : 1.0;
            for (i64 c = 0; c < op.channels; ++c) {
                const float* plane = x + (batch * op.channels + c) * planeSize;
                float* o = out + (roi * op.channels + c) * bins;
                const Tap* tap = m_taps.data();
                for (i64 bin = 0; bin < bins; ++bin) {
                    double sum = 0, best = 0;
                    for (i64 s = 0; s < samples; ++s, ++tap) {
                        double value = 0;
                        if (tap->valid) {
                            const double v1 = tap->w[0] * plane[tap->at[0]];
                            const double v2 = tap->w[1] * plane[tap->at[1]];
                            const double v3 = tap->w[2] * plane[tap->at[2]];
                            const double v4 = tap->w[3] * plane[tap->at[3]];
                            value = op.sample(v1, v2, v3, v4);
                        }
                        sum += value;
                        best = s == 0 || value > best ? value : best;
                    }
                    o[bin] = static_cast<float>(op.isMax ? best : sum / count);
                }
            }
        }
    }

    std::string implementation() const override { return "plain:roi_align-shared-taps"; }

private:
    struct Tap {
        i64 at[4];
        double w[4];
        bool valid;
    };

    /// The taps of every bin's sampling points for one region, bin by bin; returns the points
    /// per bin.
    i64 sampleRegion(const float* box) {
        const functors::RoiAlign& op = m_op;
        const double offset = op.halfPixel ? 0.5 : 0.0;
        const double x0 = box[0] * op.spatialScale - offset;
        const double y0 = box[1] * op.spatialScale - offset;
        const double x1 = box[2] * op.spatialScale - offset;
        const double y1 = box[3] * op.spatialScale - offset;
        double roiWidth = x1 - x0, roiHeight = y1 - y0;
        if (!op.halfPixel) {
            roiWidth = roiWidth > 1 ? roiWidth : 1;
            roiHeight = roiHeight > 1 ? roiHeight : 1;
        }
        const double binHeight = roiHeight / static_cast<double>(op.outHeight);
        const double binWidth = roiWidth / static_cast<double>(op.outWidth);
        const i64 gridH = op.samplingRatio > 0
                              ? op.samplingRatio
                              : static_cast<i64>(std::ceil(roiHeight / op.outHeight));
        const i64 gridW = op.samplingRatio > 0
                              ? op.samplingRatio
                              : static_cast<i64>(std::ceil(roiWidth / op.outWidth));
        const i64 perBin = std::max<i64>(gridH, 0) * std::max<i64>(gridW, 0);
        m_taps.resize(static_cast<std::size_t>(perBin * op.outHeight * op.outWidth));
        Tap* tap = m_taps.data();
        for (i64 ph = 0; ph < op.outHeight; ++ph) {
            for (i64 pw = 0; pw < op.outWidth; ++pw) {
                for (i64 iy = 0; iy < gridH; ++iy) {
                    const double yStart =
                        y0 + ph * binHeight + (iy + 0.5) * binHeight / static_cast<double>(gridH);
                    for (i64 ix = 0; ix < gridW; ++ix, ++tap) {
                        double y = yStart;
                        double x =
                            x0 + pw * binWidth + (ix + 0.5) * binWidth / static_cast<double>(gridW);
                        *tap = Tap{{0, 0, 0, 0}, {0, 0, 0, 0}, false};
                        if (!(y >= -1.0 && y <= op.height && x >= -1.0 && x <= op.width))
                            continue;
                        y = y <= 0 ? 0 : y;
                        x = x <= 0 ? 0 : x;
                        i64 yLow = static_cast<i64>(y), xLow = static_cast<i64>(x), yHigh, xHigh;
                        if (yLow >= op.height - 1) {
                            yHigh = yLow = op.height - 1;
                            y = static_cast<double>(yLow);
                        } else {
                            yHigh = yLow + 1;
                        }
                        if (xLow >= op.width - 1) {
                            xHigh = xLow = op.width - 1;
                            x = static_cast<double>(xLow);
                        } else {
                            xHigh = xLow + 1;
                        }
                        const double ly = y - yLow, lx = x - xLow, hy = 1 - ly, hx = 1 - lx;
                        *tap = Tap{{yLow * op.width + xLow, yLow * op.width + xHigh,
                                    yHigh * op.width + xLow, yHigh * op.width + xHigh},
                                   {hy * hx, hy * lx, ly * hx, ly * lx},
                                   true};
                    }
                }
            }
        }
        return perBin;
    }

    functors::RoiAlign m_op;
    i64 m_regions;
    bool m_int32Batches;
    std::vector<Tap> m_taps; ///< one region's, reused
};

} // namespace

std::unique_ptr<Kernel> makeRoiAlign(const KernelSpec& spec) {
    if (spec.inputs.size() < 3 || spec.inputs[0].dtype != DType::Float32 ||
        spec.inputs[1].dtype != DType::Float32 || spec.outputs.size() != 1 ||
        spec.outputs[0].dtype != DType::Float32 ||
        (spec.inputs[2].dtype != DType::Int64 && spec.inputs[2].dtype != DType::Int32))
        return nullptr;
    auto plan = planIndexing(spec);
    if (!plan || plan.value().size() != 1)
        return nullptr;
    const auto* op = std::get_if<functors::RoiAlign>(&plan.value()[0].op);
    if (!op || op->height <= 0 || op->width <= 0)
        return nullptr;
    return std::make_unique<RoiAlignKernel>(*op, spec.inputs[1].shape[0],
                                            spec.inputs[2].dtype == DType::Int32);
}

} // namespace placer::cpu
