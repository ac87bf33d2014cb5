#include "moreau/md/md_solver.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/md/force_stage.hpp"
#include "integrators/stages.hpp"
#include "law_kernels.hpp"

namespace moreau {

MdSolver::MdSolver(const MdSettings& settings) : settings_(settings) {
    md_kernels::prepareRunConstants(settings_);
    integrator_ = makeIntegrator(settings_.integrator);
    centralDifference_ = integrator_->centralDifference();
    // Multi-stage schemes evaluate the laws that keep memory beyond a
    // spring (and the spring with Cundall's velocity increment) from the
    // committed memory with the stage's increment since the step start.
    const ForceLawRow& t = lawRow(settings_.tangential);
    const bool historyMode = !centralDifference_ && (t.historyStages || settings_.muStaticRatio != 1.0 ||
                                                     (t.velocityIncrement && settings_.springVelocityIncrement));
    forces_ = std::make_unique<MdForceStage>(settings_, historyMode);
    stages_ = std::make_unique<SchemeStages>(*forces_, historyMode);
}

MdSolver::~MdSolver() = default;
MdSolver::MdSolver(const MdSolver& other)
    : settings_(other.settings_),
      forces_(std::make_unique<MdForceStage>(*other.forces_)),
      stages_(std::make_unique<SchemeStages>(*other.stages_, *forces_)),
      integrator_(makeIntegrator(settings_.integrator)),
      centralDifference_(other.centralDifference_),
      pairs_(other.pairs_),
      margin_(other.margin_),
      trackWork_(other.trackWork_),
      diagnostics_(other.diagnostics_),
      diagnosticsDone_(other.diagnosticsDone_) {}
MdSolver& MdSolver::operator=(const MdSolver& other) {
    if (this != &other) *this = MdSolver(other);
    return *this;
}
MdSolver::MdSolver(MdSolver&&) noexcept = default;
MdSolver& MdSolver::operator=(MdSolver&&) noexcept = default;

bool MdSolver::pairListAdmits(const MdSettings& s, std::string* why) {
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

void MdSolver::usePairList(double skin, double innerSkin, double margin) {
    std::string why;
    if (!pairListAdmits(settings_, &why)) throw InputError("md.pipeline = fused: " + why + "; use md.pipeline = staged");
    pairs_.emplace(lawRow(settings_.tangential).spring, skin, innerSkin);
    margin_ = margin;
    forces_->setPairLanes(settings_.simdLanes);
}

void MdSolver::restorePairMemory(const ContactStore& store, const std::string& origin) {
    pairs_->restoreMemory(store, origin);
    diagnostics_ = PairDiagnostics{};
    diagnosticsDone_ = true;
}

int MdSolver::pairLanes() const { return forces_->pairLanes(); }
bool MdSolver::pairLanesTuning() const { return forces_->pairLanesTuning(); }
const char* MdSolver::pairIsa(const World&) const { return forces_->pairIsa(); }

void MdSolver::trackWork(bool on) {
    if (!pairs_) return;  // the contact list schedule always sums it
    trackWork_ = on;
    forces_->setWorkIn(0.0);
}

std::vector<PairDiagnostic> MdSolver::pairDiagnostics() const {
    return pairs_ ? forces_->pairDiagnostics(*pairs_) : std::vector<PairDiagnostic>{};
}

const PairDiagnostics& MdSolver::diagnostics() const {
    if (diagnosticsDone_) return diagnostics_;
    diagnostics_ = sumPairDiagnostics(pairDiagnostics());
    diagnosticsDone_ = true;
    return diagnostics_;
}

void MdSolver::step(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx) {
    forces(world, contacts, slots, ctx);
    integrate(world, contacts, slots, ctx);
}

void MdSolver::forces(const World& world, std::vector<Contact>& contacts, ContactSlots& slots,
                      const StepContext& ctx, const ShapePoses* atThisPose) {
    if (pairs_) {  // the pair schedule: the list brought up to date, then the laws over it
        pairs_->update(world, margin_);
        forces_->evaluatePairs(world, *pairs_, ctx, margin_, trackWork_);
        diagnosticsDone_ = false;
        return;
    }
    if (!centralDifference_) return;  // the scheme evaluates its own stages (integrate)
    checkSlots(contacts, slots);
    forces_->evaluate(world, contacts, slots.values.data(), ctx.dt, nullptr, atThisPose);
    forces_->gather(world, contacts);
    forces_->checkFinite(ctx.step);
    forces_->commit(contacts, slots);
}

void MdSolver::integrate(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx) {
    if (pairs_) {  // the kick–drift reads the sums, clears them and tests the list's travel
        pairs_->setMoved(md_kernels::advanceLeapfrog(world, forces_->force(), forces_->torque(), ctx.dt, &pairs_->builtAt(),
                                                     pairs_->travelLimit2(), forces_->driftKernel(), forces_->pairLanes(),
                                                     true));
        forces_->sumsCleared();
        return;
    }
    if (centralDifference_) {
        md_kernels::advanceLeapfrog(world, forces_->force(), forces_->torque(), ctx.dt);
        return;
    }
    checkSlots(contacts, slots);
    stages_->step(world, contacts, slots, ctx, *integrator_);
}

void MdSolver::overrideContactForce(std::size_t i, const Vec3& f) { forces_->force()[i] = f; }
const Vec3& MdSolver::contactForce(std::size_t i) const { return forces_->force()[i]; }
const LawSlots& MdSolver::slotLayout() const { return forces_->layout(); }
double MdSolver::stageForceSeconds() const { return stages_->forceSeconds; }
double MdSolver::elasticEnergy() const { return pairs_ ? diagnostics().elastic : forces_->elastic(); }
double MdSolver::contactWork() const {
    return pairs_ && !trackWork_ ? std::numeric_limits<double>::quiet_NaN() : forces_->workIn();
}
const MdSolver::TangentialWork& MdSolver::kuhnWork() const { return forces_->lawWork(); }

void MdSolver::setKuhnSwitches(bool onset, bool slipOnset, bool slipRotation, bool projection, bool twirl) {
    for (MdSettings* s : {&settings_, &forces_->settings()}) {
        s->kuhnOnset = onset;
        s->kuhnSlipOnset = slipOnset;
        s->kuhnSlipRotation = slipRotation;
        s->kuhnProjection = projection;
        s->kuhnTwirl = twirl;
    }
}

void MdSolver::setContactChanges(ContactChanges changes) { stages_->changes = std::move(changes); }
void MdSolver::setStageHook(std::function<void(World&, std::vector<Vec6>&)> hook) { stages_->stageHook = std::move(hook); }
void MdSolver::setForceHook(ForceHook hook) { stages_->forceHook = std::move(hook); }
void MdSolver::setFieldRanks(FieldRanks ranks) {
    forces_->setGhosts(ranks.ghosts);
    stages_->fieldRanks = std::move(ranks);
}

std::vector<double> MdSolver::kuhnContactDissipation(const ContactSlots& slots) const {
    std::vector<double> out;
    const int slot = lawRow(settings_.tangential).dissipatedWorkSlot;
    if (slot < 0 || slots.stride == 0) return out;
    const std::size_t m = slots.records();
    out.resize(m);
    for (std::size_t c = 0; c < m; ++c) out[c] = slots.at(c)[forces_->layout().tangential + static_cast<std::size_t>(slot)];
    return out;
}

void MdSolver::reset() { stages_->state.reset(); }

void MdSolver::saveState(ByteWriter& out) const {
    const SchemeState& S = stages_->state;
    out.put(std::uint32_t{1});  // the layout of this block
    out.put(forces_->workIn());
    out.put(forces_->lawWork());
    out.put(forces_->elastic());
    out.put(S.elasticBase);
    out.put(S.pendingKick);
    out.put(static_cast<std::int64_t>(S.history));
    out.put(static_cast<std::int64_t>(S.stepNumber));
    out.put(static_cast<std::uint8_t>(S.haveSignature));
    out.put(S.touchingSignature);
    out.put(static_cast<std::uint64_t>(S.pastV.size()));
    for (std::size_t k = 0; k < S.pastV.size(); ++k) {
        out.putDense(S.pastV[k]);
        out.putDense(S.pastA[k]);
    }
    for (const Field* f : {&S.pastDX, &S.gearA, &S.gearB, &S.gearC, &S.gearD}) out.putDense(*f);
}

void MdSolver::loadState(ByteReader& in, std::size_t bodies) {
    SchemeState& S = stages_->state;
    if (in.get<std::uint32_t>("MD solver state") != 1) in.fail("MD solver state of another layout");
    forces_->setWorkIn(in.get<double>("MD work"));
    forces_->lawWork() = in.get<TangentialWork>("MD law work");
    forces_->setElastic(in.get<double>("MD elastic energy"));
    S.elasticBase = in.get<double>("MD elastic energy");
    S.pendingKick = in.get<double>("MD pending kick");
    S.history = static_cast<long>(in.get<std::int64_t>("MD history length"));
    S.stepNumber = static_cast<long>(in.get<std::int64_t>("MD step"));
    S.haveSignature = in.getBool("MD contact signature");
    S.touchingSignature = in.get<std::uint64_t>("MD contact signature");
    const std::size_t past = in.count(16, "MD history");
    if (past != 0 && past != 4) in.fail("MD history of " + std::to_string(past) + " steps (allowed: 0 or 4)");
    S.pastV.assign(past, Field());
    S.pastA.assign(past, Field());
    for (std::size_t k = 0; k < past; ++k) {
        S.pastV[k] = in.getDense<Vec6>("MD history velocities");
        S.pastA[k] = in.getDense<Vec6>("MD history accelerations");
    }
    for (Field* f : {&S.pastDX, &S.gearA, &S.gearB, &S.gearC, &S.gearD}) *f = in.getDense<Vec6>("MD scheme state");
    if (S.history < 0 || S.history > 4) in.fail("MD history length " + std::to_string(S.history) + " (allowed: 0 to 4)");
    auto check = [&](const Field& f) {
        if (!f.empty() && f.size() != bodies)
            in.fail("MD scheme state of " + std::to_string(f.size()) + " bodies, the world has " + std::to_string(bodies));
    };
    for (const Field* f : S.fields()) check(*f);
}

MdSolver::SchemeCarry MdSolver::schemeCarry() const {
    SchemeState& S = stages_->state;
    SchemeCarry c;
    c.history = S.history;
    c.pendingKick = S.pendingKick;
    c.haveSignature = S.haveSignature;
    c.signature = S.touchingSignature;
    c.past = S.pastV.size() == 4;
    const auto fields = S.fields();
    for (std::size_t j = 0; j < fields.size(); ++j)
        if (!fields[j]->empty()) c.fields |= 1u << j;
    return c;
}

void MdSolver::bodyScheme(std::size_t i, Vec6* out) const {
    SchemeState& S = stages_->state;
    for (const Field* f : S.fields())
        if (!f->empty()) *out++ = (*f)[i];
}

void MdSolver::adoptScheme(const SchemeCarry& carry, std::size_t bodies,
                           const std::function<void(std::size_t, Vec6*)>& entry) {
    SchemeState& S = stages_->state;
    S.history = carry.history;
    S.pendingKick = carry.pendingKick;
    S.haveSignature = carry.haveSignature;
    S.touchingSignature = carry.signature;
    S.pastV.assign(carry.past ? 4 : 0, Field());
    S.pastA.assign(carry.past ? 4 : 0, Field());
    for (Field* f : {&S.pastDX, &S.gearA, &S.gearB, &S.gearC, &S.gearD}) f->clear();
    const auto fields = S.fields();
    std::vector<Field*> held;
    for (std::size_t j = 0; j < fields.size(); ++j)
        if (carry.fields & (1u << j)) {
            fields[j]->assign(bodies, Vec6::Zero());
            held.push_back(fields[j]);
        }
    std::vector<Vec6> one(held.size());
    for (std::size_t i = 0; i < bodies && !held.empty(); ++i) {
        entry(i, one.data());
        for (std::size_t j = 0; j < held.size(); ++j) (*held[j])[i] = one[j];
    }
}

void MdSolver::checkSlots(const std::vector<Contact>& contacts, const ContactSlots& slots) const {
    const std::size_t stride = forces_->layout().stride;
    if (slots.stride != stride || slots.values.size() != contacts.size() * stride)
        throw std::logic_error("MdSolver: the contact slots hold " + std::to_string(slots.values.size()) +
                               " doubles of stride " + std::to_string(slots.stride) + " for " +
                               std::to_string(contacts.size()) + " contacts; the laws need stride " +
                               std::to_string(stride) + " (carry them with matchContactMemory)");
}

}  // namespace moreau
