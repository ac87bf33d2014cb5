#include "moreau/cd/local_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <numbers>
#include <sstream>

#include <Eigen/Cholesky>

#include "moreau/cd/natural_map.hpp"
#include "moreau/cd/partition.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"

#ifdef MOREAU_HAVE_FCLIB
#include <hdf5.h>
extern "C" {
#include <fclib.h>
}
#endif

namespace moreau {

namespace {

Vec3 get3(const std::vector<double>& v, std::size_t c) { return {v[3 * c], v[3 * c + 1], v[3 * c + 2]}; }
void put3(std::vector<double>& v, std::size_t c, const Vec3& x) {
    for (int k = 0; k < 3; ++k) v[3 * c + static_cast<std::size_t>(k)] = x[k];
}

/// Entries (i, j, value) of W, duplicates summed, into 3×3 blocks.
struct Triplets {
    std::map<std::pair<std::int64_t, std::int64_t>, Mat3> blocks;
    void add(std::int64_t i, std::int64_t j, double value) {
        auto it = blocks.try_emplace({i / 3, j / 3}, Mat3::Zero()).first;
        it->second(i % 3, j % 3) += value;
    }
};

/// The blocks into the problem's block rows; every diagonal block must be there.
void setBlocks(LocalProblem& p, const Triplets& t, const std::string& path) {
    const std::size_t n = p.contacts();
    p.rowStart.assign(n + 1, 0);
    p.col.clear();
    p.block.clear();
    std::size_t row = 0;
    for (const auto& [ij, b] : t.blocks) {  // map order: by row, then column
        while (row < static_cast<std::size_t>(ij.first)) p.rowStart[++row] = p.col.size();
        p.col.push_back(static_cast<std::int32_t>(ij.second));
        p.block.push_back(b);
    }
    while (row < n) p.rowStart[++row] = p.col.size();
    for (std::size_t i = 0; i < n; ++i) {
        const auto* begin = p.col.data() + p.rowStart[i];
        const auto* end = p.col.data() + p.rowStart[i + 1];
        if (std::find(begin, end, static_cast<std::int32_t>(i)) == end)
            throw InputError(path + ": W has no diagonal block for contact " + std::to_string(i) +
                             " (every contact needs one)");
    }
}

void checkShape(const LocalProblem& p, const std::string& path) {
    for (std::size_t c = 0; c < p.contacts(); ++c)
        if (!(p.mu[c] >= 0.0) || !std::isfinite(p.mu[c]))
            throw InputError(path + ": mu of contact " + std::to_string(c) + " is " + std::to_string(p.mu[c]) +
                             " (allowed: a finite real >= 0)");
    for (double v : p.q)
        if (!std::isfinite(v)) throw InputError(path + ": q has a non-finite entry (allowed: finite reals)");
}

LocalProblem readText(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError("cannot read problem file '" + path + "'");
    std::vector<std::string> tok;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line.substr(0, line.find('#')));
        for (std::string w; ls >> w;) tok.push_back(std::move(w));
    }
    std::size_t at = 0;
    auto next = [&](const char* what) -> const std::string& {
        if (at >= tok.size()) throw InputError(path + ": ends before " + what + " (format FC3D 1: see docs/convergence.md)");
        return tok[at++];
    };
    auto number = [&](const char* what) {
        const std::string& s = next(what);
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size()) throw InputError(path + ": '" + s + "' is not a number (" + what + ")");
        return v;
    };
    auto count = [&](const char* what) {
        const double v = number(what);
        if (v < 0 || v != std::floor(v) || v > 1e9) throw InputError(path + ": " + what + " must be a whole number >= 0");
        return static_cast<std::int64_t>(v);
    };
    if (next("the magic") != "FC3D" || next("the version") != "1")
        throw InputError(path + ": not a problem file (allowed: FCLIB HDF5, or text starting 'FC3D 1')");
    LocalProblem p;
    const auto nc = static_cast<std::size_t>(count("the contact count"));
    p.mu.resize(nc);
    p.q.resize(3 * nc);
    for (double& m : p.mu) m = number("mu");
    for (double& v : p.q) v = number("q");
    if (next("W") != "W") throw InputError(path + ": expected 'W' after q");
    const std::string kind = next("the storage of W");
    const auto n = static_cast<std::int64_t>(3 * nc);
    Triplets t;
    if (kind == "dense") {
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                if (const double v = number("W"); v != 0.0 || i / 3 == j / 3) t.add(i, j, v);
    } else if (kind == "triplet") {
        const std::int64_t nnz = count("nnz");
        for (std::int64_t k = 0; k < nnz; ++k) {
            const std::int64_t i = count("a row index"), j = count("a column index");
            const double v = number("W");
            if (i >= n || j >= n)
                throw InputError(path + ": W entry (" + std::to_string(i) + ", " + std::to_string(j) +
                                 ") outside 0.." + std::to_string(n - 1));
            t.add(i, j, v);
        }
    } else {
        throw InputError(path + ": W storage '" + kind + "' (allowed: dense, triplet)");
    }
    p.title = "FC3D text problem";
    setBlocks(p, t, path);
    checkShape(p, path);
    return p;
}

#ifdef MOREAU_HAVE_FCLIB
LocalProblem readFclibFile(const std::string& path) {
    fclib_local* f = fclib_read_local(path.c_str());
    if (!f) throw InputError(path + ": not an FCLIB local problem (fclib_read_local failed)");
    struct Free {
        fclib_local* f;
        ~Free() {
            fclib_delete_local(f);  // frees the members, not the struct
            std::free(f);
        }
    } guard{f};
    if (f->spacedim != 3) throw InputError(path + ": spacedim " + std::to_string(f->spacedim) + " (allowed: 3)");
    if (f->V || f->R) throw InputError(path + ": has equality constraints V, R (allowed: none)");
    const fclib_matrix* W = f->W;
    if (!W || W->m != W->n || W->m % 3 != 0 || !f->q || !f->mu)
        throw InputError(path + ": W must be square with 3 rows per contact, and q and mu present");
    LocalProblem p;
    const auto nc = static_cast<std::size_t>(W->m / 3);
    p.mu.assign(f->mu, f->mu + nc);
    p.q.assign(f->q, f->q + 3 * nc);
    Triplets t;
    if (W->nz >= 0) {
        for (int k = 0; k < W->nz; ++k) t.add(W->p[k], W->i[k], W->x[k]);
    } else {
        const bool csc = W->nz == -1;
        const int outer = csc ? W->n : W->m;
        for (int o = 0; o < outer; ++o)
            for (int k = W->p[o]; k < W->p[o + 1]; ++k) t.add(csc ? W->i[k] : o, csc ? o : W->i[k], W->x[k]);
    }
    if (f->info) {
        if (f->info->title) p.title = f->info->title;
        if (f->info->description) p.description = f->info->description;
    }
    setBlocks(p, t, path);
    checkShape(p, path);
    // A stored solution, scored by FCLIB itself too (an independent check of naturalError).
    H5E_auto2_t handler = nullptr;
    void* data = nullptr;
    H5Eget_auto2(H5E_DEFAULT, &handler, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // a file without a solution is not an error
    if (fclib_solution* sol = fclib_read_solution(path.c_str())) {
        if (sol->r) {
            p.solution.assign(sol->r, sol->r + 3 * nc);
            p.fclibMerit = fclib_merit_local(f, MERIT_1, sol);
        }
        fclib_delete_solutions(sol, 1);
    }
    H5Eset_auto2(H5E_DEFAULT, handler, data);
    return p;
}
#endif

}  // namespace

std::vector<double> LocalProblem::velocity(const std::vector<double>& r) const {
    std::vector<double> u = q;
    for (std::size_t i = 0; i < contacts(); ++i) {
        Vec3 ui = Vec3::Zero();
        for (std::size_t k = rowStart[i]; k < rowStart[i + 1]; ++k)
            ui += block[k] * get3(r, static_cast<std::size_t>(col[k]));
        for (int d = 0; d < 3; ++d) u[3 * i + static_cast<std::size_t>(d)] += ui[d];
    }
    return u;
}

double naturalError(const LocalProblem& p, const std::vector<double>& r) {
    const std::vector<double> u = p.velocity(r);
    double e2 = 0.0;
    for (std::size_t c = 0; c < p.contacts(); ++c) e2 += naturalMapResidual2(get3(r, c), get3(u, c), Vec3::UnitX(), p.mu[c]);
    auto norm2 = [](const std::vector<double>& v) { return std::inner_product(v.begin(), v.end(), v.begin(), 0.0); };
    return naturalError(e2, norm2(p.q), norm2(r), norm2(u));
}

bool haveFclib() {
#ifdef MOREAU_HAVE_FCLIB
    return true;
#else
    return false;
#endif
}

LocalProblem readLocalProblem(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot read problem file '" + path + "'");
    char magic[8] = {};
    in.read(magic, 8);
    if (in.gcount() == 8 && std::memcmp(magic, "\x89HDF\r\n\x1a\n", 8) == 0) {
#ifdef MOREAU_HAVE_FCLIB
        return readFclibFile(path);
#else
        throw InputError(path + ": an HDF5 (FCLIB) file, and this build has no FCLIB (install libfclib-dev "
                         "libhdf5-dev and rebuild)");
#endif
    }
    return readText(path);
}

void writeFclib(const LocalProblem& p, const std::string& path, const std::vector<double>* r) {
#ifdef MOREAU_HAVE_FCLIB
    const std::size_t n = 3 * p.contacts();
    // W as triplets (row indices in p, column indices in i): its entries as
    // they are, symmetric or not to the last bit.
    std::vector<int> rowIdx, colIdx;
    std::vector<double> val;
    rowIdx.reserve(9 * p.block.size());
    colIdx.reserve(9 * p.block.size());
    val.reserve(9 * p.block.size());
    for (std::size_t bi = 0; bi < p.contacts(); ++bi)
        for (std::size_t k = p.rowStart[bi]; k < p.rowStart[bi + 1]; ++k)
            for (int rr = 0; rr < 3; ++rr)
                for (int cc = 0; cc < 3; ++cc) {
                    rowIdx.push_back(static_cast<int>(3 * bi) + rr);
                    colIdx.push_back(3 * p.col[k] + cc);
                    val.push_back(p.block[k](rr, cc));
                }
    std::string title = p.title.empty() ? "Moreau contact dynamics step" : p.title;
    std::string description = p.description, math = "W = H^T M^-1 H (symmetric positive semi-definite)";
    fclib_info info{title.data(), description.data(), math.data()};
    fclib_matrix W{};
    W.nzmax = static_cast<int>(val.size());
    W.m = W.n = static_cast<int>(n);
    W.p = rowIdx.data();
    W.i = colIdx.data();
    W.x = val.data();
    W.nz = static_cast<int>(val.size());
    std::vector<double> mu = p.mu, q = p.q;
    fclib_local f{};
    f.W = &W;
    f.mu = mu.data();
    f.q = q.data();
    f.spacedim = 3;
    f.info = &info;
    std::remove(path.c_str());  // fclib appends to an existing file
    if (!fclib_write_local(&f, path.c_str())) throw InputError("cannot write FCLIB problem '" + path + "'");
    if (r) {
        std::vector<double> rr = *r, u = p.velocity(*r);
        fclib_solution s{nullptr, u.data(), rr.data(), nullptr};
        if (!fclib_write_solution(&s, path.c_str())) throw InputError("cannot write FCLIB solution to '" + path + "'");
    }
#else
    (void)p;
    (void)r;
    throw InputError("cannot write '" + path + "': this build has no FCLIB (install libfclib-dev libhdf5-dev and rebuild)");
#endif
}

Vec3 solveOneContact(const Mat3& W, const Mat3& Winv, const Vec3& q, double mu, const Vec3& guess) {
    if (q.x() >= 0.0) return Vec3::Zero();  // u = q separates or rests: r = 0 satisfies the law
    const Vec3 stick = -(Winv * q);
    if (mu == 0.0) return W(0, 0) > 0.0 ? Vec3(-q.x() / W(0, 0), 0.0, 0.0) : Vec3::Zero();  // u_n = 0, r_t = 0
    if (stick.x() > 0.0 && std::hypot(stick.y(), stick.z()) <= mu * stick.x()) return stick;
    // Sliding along d = (cos θ, sin θ): r = ρ (1, −μ d), ρ from u_n = 0; a root
    // of f(θ) = u_t × d with u_t · d ≥ 0.
    struct Slide {
        Vec3 r;
        double cross, along;
        bool valid;
    };
    auto at = [&](double th) {
        const double c = std::cos(th), s = std::sin(th);
        const Vec3 dir(1.0, -mu * c, -mu * s);
        const double den = W.row(0).dot(dir);
        Slide sl{Vec3::Zero(), 0.0, 0.0, den > 0.0};
        if (!sl.valid) return sl;
        sl.r = (-q.x() / den) * dir;
        const Vec3 u = W * sl.r + q;
        sl.cross = u.y() * s - u.z() * c;
        sl.along = u.y() * c + u.z() * s;
        return sl;
    };
    const double scale = q.norm();
    // From the previous impulse's slip direction (−r_t), else the sticking
    // impulse's: secant steps on f, which converge in a few steps when the
    // contact slid the same way last sweep.
    const double gt = std::hypot(guess.y(), guess.z());
    double th0 = gt > 0.0 ? std::atan2(-guess.z(), -guess.y()) : std::atan2(-stick.z(), -stick.y());
    {
        double a = th0, b = th0 + 1e-4;
        Slide sa = at(a), sb = at(b);
        for (int it = 0; it < 30 && sa.valid && sb.valid; ++it) {
            if (std::abs(sb.cross) <= 1e-15 * scale || std::abs(b - a) < 1e-15) {
                if (sb.along >= 0.0) return sb.r;
                break;
            }
            const double denom = sb.cross - sa.cross;
            if (denom == 0.0) break;
            const double c = b - sb.cross * (b - a) / denom;
            a = b;
            sa = sb;
            b = c;
            sb = at(b);
        }
    }
    // A scan of the directions from th0 with bisection on each sign change.
    constexpr int kScan = 72;
    const double h = 2.0 * std::numbers::pi / kScan;
    Slide prev = at(th0);
    for (int k = 1; k <= kScan; ++k) {
        double lo = th0 + (k - 1) * h, hi = th0 + k * h;
        const Slide cur = at(hi);
        if (prev.valid && cur.valid && (prev.cross <= 0.0) != (cur.cross <= 0.0)) {
            const bool loNeg = prev.cross <= 0.0;
            for (int it = 0; it < 60 && hi - lo > 1e-15; ++it) {
                const double mid = 0.5 * (lo + hi);
                ((at(mid).cross <= 0.0) == loNeg ? lo : hi) = mid;
            }
            const Slide s = at(0.5 * (lo + hi));
            if (s.valid && s.along >= 0.0) return s.r;
        }
        prev = cur;
    }
    // No sliding root found (a degenerate W): projected fixed point on the cone.
    Vec3 r = Vec3::Zero();
    const double rho = 1.0 / std::max(W.norm(), 1e-300);
    for (int it = 0; it < 1000; ++it) {
        const Vec3 u = W * r + q;
        r = projectOnCone(r - rho * (u + Vec3(mu * std::hypot(u.y(), u.z()), 0.0, 0.0)), Vec3::UnitX(), mu);
    }
    return r;
}

Vec3 solveOneContact(const Mat3& W, const Vec3& q, double mu) {
    return solveOneContact(W, W.inverse(), q, mu, Vec3::Zero());
}

LocalSolveResult solveLocal(const LocalProblem& p, std::vector<double>& r, const CdSettings& settings,
                            std::uint64_t seed) {
    const std::size_t nc = p.contacts();
    r.resize(3 * nc, 0.0);
    constexpr std::size_t kNone = ~std::size_t{0};
    std::vector<std::size_t> diag(nc, kNone);  // a row without one (W_ii = 0) keeps r_i = 0
    std::vector<Mat3> inv(nc, Mat3::Zero());
    for (std::size_t i = 0; i < nc; ++i)
        for (std::size_t k = p.rowStart[i]; k < p.rowStart[i + 1]; ++k)
            if (static_cast<std::size_t>(p.col[k]) == i && p.block[k].determinant() > 0.0) {
                diag[i] = k;
                inv[i] = p.block[k].inverse();
            }
    const bool fixed = settings.criterion == Criterion::Fixed;
    const int maxSweeps = fixed ? settings.iterations : settings.maxIterations;
    const int every = std::max(1, settings.checkEvery);
    std::vector<std::uint32_t> order(nc);
    std::iota(order.begin(), order.end(), 0u);
    LocalSolveResult res;
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < maxSweeps; ++s) {
        if (settings.order == SweepOrder::RandomSweep || (settings.order == SweepOrder::ShuffleOnce && s == 0)) {
            std::iota(order.begin(), order.end(), 0u);
            Rng rng = Rng::stream(seed, 0, static_cast<std::uint64_t>(s), 1);
            rng.shuffle(std::span<std::uint32_t>(order));
        } else if (settings.order == SweepOrder::RandomKeys) {  // the row index as the key
            std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(nc);
            for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(nc); ++i) keyed[i] = {sweepPriority(seed, 0, s, i), i};
            std::sort(keyed.begin(), keyed.end());
            for (std::size_t i = 0; i < nc; ++i) order[i] = keyed[i].second;
        }
        const std::vector<double> start = settings.order == SweepOrder::Jacobi ? r : std::vector<double>{};
        const std::vector<double>& from = start.empty() ? r : start;  // Jacobi: the sweep's starting impulses
        Rng draws = Rng::stream(seed, 0, static_cast<std::uint64_t>(s), 2);
        const bool drawn = settings.order == SweepOrder::RandomSequential;
        for (std::size_t k = 0; k < nc; ++k) {
            const std::size_t i = drawn ? draws.below(static_cast<std::uint32_t>(nc)) : order[k];
            if (diag[i] == kNone) continue;
            Vec3 qi = get3(p.q, i);
            for (std::size_t b = p.rowStart[i]; b < p.rowStart[i + 1]; ++b)
                if (b != diag[i]) qi += p.block[b] * get3(from, static_cast<std::size_t>(p.col[b]));
            put3(r, i, solveOneContact(p.block[diag[i]], inv[i], qi, p.mu[i], get3(from, i)));
        }
        res.sweeps = s + 1;
        if (!fixed && (res.sweeps % every == 0 || res.sweeps == maxSweeps)) {
            res.error = naturalError(p, r);
            if (res.error <= settings.epsilon) {
                res.converged = true;
                break;
            }
        }
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (fixed) {
        res.error = naturalError(p, r);
        res.converged = true;
    }
    return res;
}

}  // namespace moreau
