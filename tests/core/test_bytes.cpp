// Binary blocks of checkpoints (core/bytes.hpp): every value reads back as
// written, and a truncated, corrupt or hostile buffer is refused with the one
// InputError the header documents ("ORIGIN: WHAT ... (at byte N)"), never a
// read past the end or a huge allocation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/types.hpp"
#include "support/input_error.hpp"

using namespace moreau;
using moreau::test::errorOf;

namespace {

struct Plain {
    std::int32_t a;
    double b;
};

}  // namespace

TEST_SUITE("core") {

TEST_CASE("bytes: FNV-1a 64 of the published test vectors") {
    CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
    CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
    CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
    // Chained: the hash of a whole is the hash of its second part from the first's.
    CHECK(fnv1a64("bar", fnv1a64("foo")) == fnv1a64("foobar"));
}

TEST_CASE("bytes: every kind of value reads back as written") {
    ByteWriter out;
    out.put(std::int64_t{-5});
    out.put(std::numeric_limits<double>::quiet_NaN());
    out.put(-0.0);
    out.put(Plain{7, 2.5});
    out.put(Vec3(1.0, -2.0, 3.5));
    out.putString("scene text\0with a NUL");
    out.putString(std::string("a\0b", 3));
    out.putString("");
    out.putVector(std::vector<std::uint32_t>{1, 2, 0xffffffffu});
    out.putVector(std::vector<double>{});
    out.putDense(std::vector<Vec3>{Vec3(1, 2, 3), Vec3(-4, 5, -6)});
    out.putBools({true, false, true});
    out.put(true);

    ByteReader in(out.bytes(), "test");
    CHECK(in.get<std::int64_t>("i") == -5);
    CHECK(std::isnan(in.get<double>("nan")));
    const double zero = in.get<double>("zero");
    CHECK(zero == 0.0);
    CHECK(std::signbit(zero));
    const Plain p = in.get<Plain>("plain");
    CHECK(p.a == 7);
    CHECK(p.b == 2.5);
    CHECK(in.get<Vec3>("vec") == Vec3(1.0, -2.0, 3.5));
    CHECK(in.getString("s") == "scene text");  // a literal ends at its NUL
    CHECK(in.getString("s") == std::string("a\0b", 3));
    CHECK(in.getString("s").empty());
    CHECK(in.getVector<std::uint32_t>("u") == std::vector<std::uint32_t>{1, 2, 0xffffffffu});
    CHECK(in.getVector<double>("d").empty());
    const auto dense = in.getDense<Vec3>("dense");
    REQUIRE(dense.size() == 2);
    CHECK(dense[1] == Vec3(-4, 5, -6));
    CHECK(in.getBools("b") == std::vector<bool>{true, false, true});
    CHECK(in.getBool("flag"));
    CHECK(in.left() == 0);
    CHECK(in.offset() == out.bytes().size());
}

TEST_CASE("bytes: clear empties a writer for reuse") {
    ByteWriter out;
    out.put(1.0);
    out.clear();
    CHECK(out.bytes().empty());
    out.putString("x");
    CHECK(out.bytes().size() == sizeof(std::uint64_t) + 1);
}

TEST_CASE("bytes: a truncated buffer is refused naming the origin, what was read and the byte") {
    ByteWriter out;
    out.put(std::uint32_t{1});
    out.put(2.0);
    const std::string whole = out.bytes();
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
        ByteReader in(std::string_view(whole).substr(0, cut), "checkpoint 'x'");
        const std::string why = errorOf([&] {
            in.get<std::uint32_t>("the count");
            in.get<double>("the time");
        });
        CAPTURE(cut);
        CHECK(why == (cut < 4 ? "checkpoint 'x': truncated in the count (at byte 0)"
                              : "checkpoint 'x': truncated in the time (at byte 4)"));
    }
}

TEST_CASE("bytes: a count larger than the bytes left is refused before any allocation") {
    ByteWriter out;
    out.put(std::uint64_t{1} << 60);  // a hostile length
    out.put(1.0);
    {
        ByteReader in(out.bytes(), "f");
        CHECK(errorOf([&] { in.getVector<double>("the radii"); }) ==
              "f: the radii: 1152921504606846976 items, more than the 8 bytes left hold (at byte 8)");
    }
    {
        ByteReader in(out.bytes(), "f");
        CHECK(errorOf([&] { in.getString("the scene"); }) ==
              "f: the scene: 1152921504606846976 items, more than the 8 bytes left hold (at byte 8)");
    }
    {
        ByteReader in(out.bytes(), "f");
        CHECK(errorOf([&] { in.getDense<Vec3>("the positions"); }).starts_with("f: the positions: "));
    }
    {
        ByteReader in(out.bytes(), "f");
        CHECK(errorOf([&] { in.getBools("the flags"); }).starts_with("f: the flags: "));
    }
}

TEST_CASE("bytes: a corrupt boolean is refused") {
    ByteWriter out;
    out.put(std::uint8_t{2});
    ByteReader in(out.bytes(), "f");
    CHECK(errorOf([&] { in.getBool("the flag"); }) == "f: the flag is 2, not 0 or 1 (at byte 1)");

    ByteWriter list;
    list.putBools({true, false});
    list.bytes().back() = 7;
    ByteReader inList(list.bytes(), "g");
    CHECK(errorOf([&] { inList.getBools("the flags"); }) == "g: the flags is 7, not 0 or 1 (at byte 10)");
}

TEST_CASE("bytes: fail names the origin and the offset") {
    ByteWriter out;
    out.put(1.0);
    ByteReader in(out.bytes(), "checkpoint 'c'");
    in.get<double>("x");
    CHECK(errorOf([&] { in.fail("bytes after the simulation state"); }) ==
          "checkpoint 'c': bytes after the simulation state (at byte 8)");
}

}  // TEST_SUITE("core")
