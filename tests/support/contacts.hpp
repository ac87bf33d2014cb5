#pragma once
/// Contacts written by hand for the tests of what reads them (observables,
/// output).
#include "moreau/contact/contact.hpp"

namespace moreau::test {

/// A contact of bodies a and b carrying `reaction`, at `gap` along the normal
/// n (no key, no age: as Contact leaves them).
inline Contact loadedContact(BodyId a, BodyId b, const Vec3& reaction, double gap = 0.0,
                             const Vec3& n = Vec3::UnitX()) {
    Contact c;
    c.a = a;
    c.b = b;
    c.n = n;
    c.gap = gap;
    c.history.reaction = reaction;
    return c;
}

}  // namespace moreau::test
