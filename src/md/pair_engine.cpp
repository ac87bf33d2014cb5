#include "moreau/md/pair_engine.hpp"

#include <algorithm>

#include "law_kernels.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

namespace {
/// Below this many touching pairs the diagnostics are summed on one thread.
constexpr std::size_t kParallelPairs = 4096;
}  // namespace

bool MdPairEngine::supports(const MdSettings& s, std::string* why) {
    auto no = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (s.integrator != Integrator::CD) return no("md.integrator is not cd");
    const auto notFused = [&](const char* key, std::string_view law) {
        return no(std::string(key) + " = " + std::string(law) + " is not among the fused pass's laws");
    };
    if (!lawRow(s.normal).fused) return notFused("md.normal", lawRow(s.normal).name);
    if (!lawRow(s.tangential).fused) return notFused("md.tangential", lawRow(s.tangential).name);
    if (s.muStaticRatio != 1.0) return no("md.mu_static_ratio != 1 keeps a sliding flag per contact");
    if (!lawRow(s.rolling).fused) return no("md.rolling keeps a rolling spring per contact");
    return true;
}

MdPairEngine::MdPairEngine(const MdSettings& settings, double skin, double innerSkin)
    : stage_(settings, false), list_(lawRow(settings.tangential).spring, skin, innerSkin) {
    std::string why;
    if (!supports(settings, &why)) throw InputError("md.pipeline = fused: " + why + "; use md.pipeline = staged");
    stage_.setPairLanes(settings.simdLanes);
}

void MdPairEngine::step(World& world, const StepContext& ctx, double margin) {
    forces(world, ctx, margin);
    integrate(world, ctx);
}

void MdPairEngine::forces(const World& world, const StepContext& ctx, double margin) {
    list_.update(world, margin);
    stage_.evaluatePairs(world, list_, ctx, margin, trackWork_);
    diagnosticsDone_ = false;
}

void MdPairEngine::integrate(World& world, const StepContext& ctx) {
    list_.setMoved(md_kernels::advanceLeapfrog(world, stage_.force(), stage_.torque(), ctx.dt, &list_.builtAt(),
                                               list_.travelLimit2(), stage_.driftKernel(), stage_.pairLanes(), true));
    stage_.sumsCleared();
}

void MdPairEngine::restoreMemory(const ContactStore& store, const std::string& origin) {
    list_.restoreMemory(store, origin);
    diagnostics_ = Diagnostics{};
    diagnosticsDone_ = true;
}

MdPairEngine::Diagnostics sumPairDiagnostics(const std::vector<PairDiagnostic>& terms) {
    // Partial sums by chunk of kChunk touching pairs in key order, then over
    // the chunks in order: the same bits for any thread count and whatever
    // else the list holds (it depends on when it was built, e.g. before or
    // after a restart), and on MPI ranks from the terms of every rank.
    const std::size_t m = terms.size(), kChunk = MdPairList::kChunk, numChunks = (m + kChunk - 1) / kChunk;
    struct Part {
        double elastic = 0.0, overlap = 0.0, max = 0.0;
        std::size_t loaded = 0;
    };
    std::vector<Part> parts(numChunks);
#pragma omp parallel for schedule(static) if (m > kParallelPairs)
    for (std::size_t chunk = 0; chunk < numChunks; ++chunk) {
        Part p;
        for (std::size_t t = chunk * kChunk; t < std::min(m, (chunk + 1) * kChunk); ++t) {
            p.elastic += terms[t].elastic;
            if (terms[t].loaded) {
                ++p.loaded;
                p.overlap += terms[t].overlap;
                p.max = std::max(p.max, terms[t].overlap);
            }
        }
        parts[chunk] = p;
    }
    MdPairEngine::Diagnostics d;
    double overlap = 0.0;
    for (const Part& p : parts) {
        d.elastic += p.elastic;
        overlap += p.overlap;
        d.overlaps.contacts += p.loaded;
        d.overlaps.max = std::max(d.overlaps.max, p.max);
    }
    if (d.overlaps.contacts > 0) d.overlaps.mean = overlap / static_cast<double>(d.overlaps.contacts);
    return d;
}

const MdPairEngine::Diagnostics& MdPairEngine::diagnostics() const {
    if (diagnosticsDone_) return diagnostics_;
    diagnostics_ = sumPairDiagnostics(pairDiagnostics());
    diagnosticsDone_ = true;
    return diagnostics_;
}

}  // namespace moreau
