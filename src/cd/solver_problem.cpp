/// CdSolver's step posed as a local problem (cd/local_problem.hpp): what the
/// engine writes to FCLIB and what the general solver and other codes read.
#include <algorithm>
#include <array>
#include <tuple>

#include "moreau/cd/natural_map.hpp"
#include "moreau/cd/solver.hpp"

namespace moreau {

LocalProblem CdSolver::localProblem() const {
    const std::size_t m = rows_.size(), nb = bodies_.size();
    LocalProblem p;
    p.title = "Moreau contact dynamics step";
    p.mu.resize(m);
    p.q.resize(3 * m);
    std::vector<Mat3> frame(m);
    // The rows each body's velocity enters: (row, sign c = −1 for a and +1
    // for b, lever arm length ρ). A row's relative velocity holds
    // c v − ρ ω × n of each of its bodies, and its impulse P changes them by
    // Δv = c M⁻¹ P, Δω = −ρ I⁻¹ (n × P), so rows i, j sharing body k couple by
    //     W_ij += c_i c_j M_k⁻¹ − ρ_i ρ_j [n_i×] I_k⁻¹ [n_j×]   (world frame).
    // In a world with clumps the arms l are general (ClumpRow) and I_k⁻¹ the
    // body's world tensor: W_ij += c_i c_j (M_k⁻¹ + [l_i×]ᵀ I_k⁻¹ [l_j×]).
    const bool clumps = !tables_.spin.empty();
    std::vector<std::vector<std::tuple<std::int32_t, double, double>>> touching(nb);
    std::vector<std::array<Vec3, 2>> arms(clumps ? m : 0);  // l_a, l_b of each row
    for (std::size_t c = 0; c < m; ++c) {
        const SolverRow& r = rows_[c];
        frame[c] = contactFrameMatrix(r.n);
        const Vec3 u = relativeVelocityOf(r) + r.bias * r.n;  // no impulse applied yet: q
        const Vec3 qf = frame[c].transpose() * u;
        for (int k = 0; k < 3; ++k) p.q[3 * c + static_cast<std::size_t>(k)] = qf[k];
        p.mu[c] = tables_.mu[r.friction];
        const auto ia = static_cast<std::size_t>(r.a), ib = static_cast<std::size_t>(r.b);
        if (mobile_[ia]) touching[ia].emplace_back(static_cast<std::int32_t>(c), -1.0, r.ra);
        if (mobile_[ib]) touching[ib].emplace_back(static_cast<std::int32_t>(c), +1.0, r.rb);
        if (clumps) {
            const bool general = r.ra < 0.0;
            arms[c] = {general ? tables_.clump[static_cast<std::size_t>(-r.ra - 1.0)].la : Vec3(r.ra * r.n),
                       general ? tables_.clump[static_cast<std::size_t>(-r.ra - 1.0)].lb : Vec3(-r.rb * r.n)};
        }
    }
    struct Entry {
        std::int32_t i, j;
        Mat3 w;
    };
    std::vector<Entry> entries;
    for (std::size_t k = 0; k < nb; ++k) {
        if (touching[k].empty()) continue;
        const SolverBody& B = bodies_[k];
        const bool masked = B.invMass < 0.0;
        const Vec3 minv = masked ? Vec3(masks_[k].linear * -B.invMass) : Vec3::Constant(B.invMass);
        const Vec3 iinv = masked ? Vec3(masks_[k].angular * B.invInertia) : Vec3::Constant(B.invInertia);
        for (const auto& [i, ci, rhoi] : touching[k])
            for (const auto& [j, cj, rhoj] : touching[k]) {
                const Vec3& ni = rows_[static_cast<std::size_t>(i)].n;
                const Vec3& nj = rows_[static_cast<std::size_t>(j)].n;
                Mat3 w = (ci * cj) * Mat3(minv.asDiagonal());
                if (clumps) {
                    const auto side = [](double c) { return c < 0.0 ? 0 : 1; };
                    const Vec3& li = arms[static_cast<std::size_t>(i)][side(ci)];
                    const Vec3& lj = arms[static_cast<std::size_t>(j)][side(cj)];
                    w += (ci * cj) * Mat3(crossMatrix(li).transpose() * tables_.spin[k].matrix() * crossMatrix(lj));
                } else {
                    w -= (rhoi * rhoj) * crossMatrix(ni) * iinv.asDiagonal() * crossMatrix(nj);
                }
                entries.push_back({i, j, frame[static_cast<std::size_t>(i)].transpose() * w * frame[static_cast<std::size_t>(j)]});
            }
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& x, const Entry& y) { return std::tie(x.i, x.j) < std::tie(y.i, y.j); });
    p.rowStart.assign(m + 1, 0);
    for (std::size_t e = 0; e < entries.size(); ++e) {
        if (!p.col.empty() && e > 0 && entries[e].i == entries[e - 1].i && entries[e].j == entries[e - 1].j) {
            p.block.back() += entries[e].w;  // a second body shared by the same two rows
            continue;
        }
        p.col.push_back(entries[e].j);
        p.block.push_back(entries[e].w);
        p.rowStart[static_cast<std::size_t>(entries[e].i) + 1] = p.col.size();
    }
    for (std::size_t c = 0; c < m; ++c) p.rowStart[c + 1] = std::max(p.rowStart[c + 1], p.rowStart[c]);
    return p;
}

std::vector<double> CdSolver::frameReactions() const {
    std::vector<double> r(3 * rows_.size());
    for (std::size_t c = 0; c < rows_.size(); ++c) {
        const Vec3 f = contactFrameMatrix(rows_[c].n).transpose() * rows_[c].P;
        for (int k = 0; k < 3; ++k) r[3 * c + static_cast<std::size_t>(k)] = f[k];
    }
    return r;
}

void LocalProblemCapture::posed(const CdSolver& solver) { problem = solver.localProblem(); }
void LocalProblemCapture::solved(const CdSolver& solver) { reactions = solver.frameReactions(); }

}  // namespace moreau
