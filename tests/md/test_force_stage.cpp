/// MD's force stage alone (md/force_stage.hpp), and the row-restricted law
/// dispatch the schedules compile through (md/force_laws.hpp).
#include <doctest/doctest.h>

#include <vector>

#include "moreau/contact/detection.hpp"
#include "moreau/md/force_laws.hpp"
#include "moreau/md/force_stage.hpp"
#include "support/md_collision.hpp"

using namespace moreau;
using doctest::Approx;

TEST_SUITE("md") {
    TEST_CASE("a row-restricted dispatch compiles and calls only the laws whose row admits them") {
        for (const auto& entry : kNormalLaws) {
            int called = 0;
            NormalLaw seen = NormalLaw::Linear;
            const bool ran = withNormalLaw<&ForceLawRow::fused>(entry.id, [&]<NormalLaw N>() {
                static_assert(lawRow(N).fused);
                ++called;
                seen = N;
            });
            CHECK(ran == entry.row.fused);
            CHECK(called == (entry.row.fused ? 1 : 0));
            if (ran) CHECK(seen == entry.id);
        }
        for (const auto& entry : kTangentialLaws) {
            int called = 0;
            const bool ran = withTangentialLaw<&ForceLawRow::lanes>(entry.id, [&]<TangentialLaw T>() {
                static_assert(lawRow(T).lanes);
                ++called;
            });
            CHECK(ran == entry.row.lanes);
            CHECK(called == (entry.row.lanes ? 1 : 0));
            // Without a flag every law is compiled and called.
            CHECK(withTangentialLaw(entry.id, []<TangentialLaw>() {}));
        }
    }

    TEST_CASE("the force stage gives the linear law's force, energy and per-body sums of one contact") {
        // Two unit grains overlapping by 0.01, closing at 1: F = k ξ + γ ξ̇ on b along +n.
        World world = test::headOnPair(1.0, 1.0, -0.01, 1.0);
        MdSettings s = test::normalLawOnly(NormalLaw::Linear, 1000.0);
        s.gammaN = 2.0;
        s.meff = EffectiveMass::None;
        std::vector<Contact> contacts;
        Contact c;
        REQUIRE(narrowSphereSphere(world, 0, 1, 0.0, c));
        contacts.push_back(c);
        MdForceStage stage(s, false);
        ContactSlots slots;
        slots.stride = stage.layout().stride;
        slots.values.assign(contacts.size() * slots.stride, 0.0);
        stage.evaluate(world, contacts, slots.values.data(), 1e-4);
        stage.gather(world, contacts);
        const double F = 1000.0 * 0.01 + 2.0 * 1.0;
        CHECK(stage.contactForces()[0].x() == Approx(F).epsilon(1e-12));
        CHECK(stage.force()[1].x() == Approx(F).epsilon(1e-12));
        CHECK(stage.force()[0].x() == Approx(-F).epsilon(1e-12));
        CHECK(stage.elastic() == Approx(0.5 * 1000.0 * 0.01 * 0.01).epsilon(1e-12));
        stage.commit(contacts, slots);
        CHECK(contacts[0].history.reaction.x() == Approx(F).epsilon(1e-12));
        // Its linearisation: δF = −k n·δu for a displacement of b by δu along x.
        std::vector<MdForceStage::Vec6> dU(2, MdForceStage::Vec6::Zero()), out;
        dU[1][0] = 1e-3;
        stage.forceDerivative(world, contacts, &dU, nullptr, out);
        CHECK(out[1][0] == Approx(-1000.0 * 1e-3).epsilon(1e-12));
        CHECK(out[0][0] == Approx(1000.0 * 1e-3).epsilon(1e-12));
    }
}
