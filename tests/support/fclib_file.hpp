#pragma once
/// FCLIB local problems written field by field, consistent or not, as HDF5
/// file images: the crafted files of the reader's tests and the inputs of the
/// fuzz harness fuzz_fclib (fuzz/README.md). Needs HDF5 (builds with FCLIB).
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace moreau::test {

/// The datasets of FCLIB's layout; an empty optional leaves the dataset out.
struct FclibFields {
    std::optional<long long> spacedim = 3, m, n, nz, nzmax;
    std::optional<std::vector<long long>> p, i;  ///< W's index arrays (int32 in the file)
    std::optional<std::vector<double>> x, q, mu, r;
    std::optional<std::string> title;
    bool equalities = false;      ///< an /fclib_local/V group (equality constraints)
    bool indicesAsReals = false;  ///< p and i stored as doubles
    bool wideIndices = false;     ///< p and i stored as int64
    bool global = false;          ///< the problem under /fclib_global instead
};

namespace detail {

class Id {
public:
    Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {
        if (id_ < 0) throw std::runtime_error("fclib_file: an HDF5 call failed");
    }
    ~Id() { close_(id_); }
    Id(const Id&) = delete;
    Id& operator=(const Id&) = delete;
    hid_t get() const { return id_; }

private:
    hid_t id_;
    herr_t (*close_)(hid_t);
};

inline void dataset(hid_t file, const std::string& path, hid_t fileType, hid_t memType, const void* data,
                    std::size_t count) {
    const hsize_t dim = count;
    const Id space(H5Screate_simple(1, &dim, nullptr), H5Sclose);
    const Id d(H5Dcreate2(file, path.c_str(), fileType, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (count > 0 && H5Dwrite(d.get(), memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        throw std::runtime_error("fclib_file: cannot write " + path);
}

inline void integers(hid_t file, const std::string& path, const std::vector<long long>& v, hid_t fileType) {
    dataset(file, path, fileType, H5T_NATIVE_LLONG, v.data(), v.size());
}

inline void reals(hid_t file, const std::string& path, const std::vector<double>& v) {
    dataset(file, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), v.size());
}

inline void group(hid_t file, const std::string& path) {
    const Id g(H5Gcreate2(file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
}

}  // namespace detail

/// The fields as the bytes of an HDF5 file (in memory: HDF5's core driver).
inline std::string fclibImage(const FclibFields& f) {
    using namespace detail;
    const Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_core(fapl.get(), 1 << 14, 0);
    std::string image;
    {
        const Id file(H5Fcreate("moreau-fclib-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
        const hid_t h = file.get();
        const std::string top = f.global ? "/fclib_global" : "/fclib_local";
        group(h, top);
        group(h, top + "/W");
        group(h, top + "/vectors");
        if (f.equalities) group(h, top + "/V");
        auto one = [&](const std::string& path, const std::optional<long long>& v) {
            if (v) integers(h, path, {*v}, H5T_STD_I32LE);
        };
        one(top + "/spacedim", f.spacedim);
        one(top + "/W/m", f.m);
        one(top + "/W/n", f.n);
        one(top + "/W/nz", f.nz);
        one(top + "/W/nzmax", f.nzmax);
        for (const auto& [name, v] : {std::pair{"p", &f.p}, std::pair{"i", &f.i}}) {
            if (!*v) continue;
            const std::string path = top + "/W/" + name;
            if (f.indicesAsReals)
                reals(h, path, std::vector<double>((*v)->begin(), (*v)->end()));
            else
                integers(h, path, **v, f.wideIndices ? H5T_STD_I64LE : H5T_STD_I32LE);
        }
        if (f.x) reals(h, top + "/W/x", *f.x);
        if (f.q) reals(h, top + "/vectors/q", *f.q);
        if (f.mu) reals(h, top + "/vectors/mu", *f.mu);
        if (f.title) {
            group(h, top + "/info");
            const Id type(H5Tcopy(H5T_C_S1), H5Tclose);
            H5Tset_size(type.get(), f.title->size() + 1);
            const Id space(H5Screate(H5S_SCALAR), H5Sclose);
            const Id d(H5Dcreate2(h, (top + "/info/title").c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT),
                       H5Dclose);
            H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, f.title->c_str());
        }
        if (f.r) {
            group(h, "/solution");
            reals(h, "/solution/r", *f.r);
        }
        H5Fflush(h, H5F_SCOPE_GLOBAL);
        const ssize_t size = H5Fget_file_image(h, nullptr, 0);
        if (size <= 0) throw std::runtime_error("fclib_file: no file image");
        image.resize(static_cast<std::size_t>(size));
        H5Fget_file_image(h, image.data(), image.size());
    }
    return image;
}

/// A consistent problem of `contacts` contacts: W = 2 I in triplets (or in
/// compressed columns), q_n = −1, μ = 0.5; its solution r_n = 0.5 when asked.
inline FclibFields diagonalProblem(int contacts, bool compressed = false, bool solution = false) {
    FclibFields f;
    const long long n = 3LL * contacts;
    f.m = f.n = f.nzmax = n;
    f.x = std::vector<double>(static_cast<std::size_t>(n), 2.0);
    f.i = std::vector<long long>(static_cast<std::size_t>(n));
    for (long long k = 0; k < n; ++k) (*f.i)[static_cast<std::size_t>(k)] = k;
    if (compressed) {
        f.nz = -1;
        f.p = std::vector<long long>(static_cast<std::size_t>(n + 1));
        for (long long k = 0; k <= n; ++k) (*f.p)[static_cast<std::size_t>(k)] = k;
    } else {
        f.nz = n;
        f.p = f.i;
    }
    f.q = std::vector<double>(static_cast<std::size_t>(n), 0.0);
    for (long long c = 0; c < contacts; ++c) (*f.q)[static_cast<std::size_t>(3 * c)] = -1.0;
    f.mu = std::vector<double>(static_cast<std::size_t>(contacts), 0.5);
    if (solution) {
        f.r = std::vector<double>(static_cast<std::size_t>(n), 0.0);
        for (long long c = 0; c < contacts; ++c) (*f.r)[static_cast<std::size_t>(3 * c)] = 0.5;
    }
    return f;
}

/// The fuzz harness's reading of bytes as fields (little-endian):
///   u16 which datasets are present (bits: spacedim, m, n, nz, nzmax, p, i,
///       x, q, mu, r, title, V group, indices as reals, int64 indices, global)
///   i32 spacedim, m, n, nz, nzmax
///   u8  entries of p, i, x, q, mu, r
///   the entries: p, i as i32, x, q, mu, r as f64
///   the rest: the title
/// Bytes past the end read as zeros. fuzz/make_fclib_seeds.py writes seeds.
inline FclibFields decodeFclibFields(const std::uint8_t* data, std::size_t size) {
    std::size_t at = 0;
    auto take = [&](void* out, std::size_t bytes) {
        std::memset(out, 0, bytes);
        const std::size_t n = at < size ? std::min(bytes, size - at) : 0;
        if (n > 0) std::memcpy(out, data + at, n);
        at += bytes;
    };
    auto u8 = [&] {
        std::uint8_t v;
        take(&v, 1);
        return v;
    };
    std::uint16_t mask;
    take(&mask, 2);
    auto bit = [&](int b) { return (mask >> b) & 1; };
    std::int32_t head[5];
    take(head, sizeof head);
    std::uint8_t counts[6];
    for (auto& c : counts) c = u8();
    FclibFields f;
    std::optional<long long>* scalars[5] = {&f.spacedim, &f.m, &f.n, &f.nz, &f.nzmax};
    for (int k = 0; k < 5; ++k) *scalars[k] = bit(k) ? std::optional<long long>(head[k]) : std::nullopt;
    auto ints = [&](int b, std::uint8_t count) {
        std::vector<long long> v(count);
        for (auto& x : v) {
            std::int32_t e;
            take(&e, 4);
            x = e;
        }
        return bit(b) ? std::optional(v) : std::nullopt;
    };
    auto doubles = [&](int b, std::uint8_t count) {
        std::vector<double> v(count);
        for (auto& x : v) take(&x, 8);
        return bit(b) ? std::optional(v) : std::nullopt;
    };
    f.p = ints(5, counts[0]);
    f.i = ints(6, counts[1]);
    f.x = doubles(7, counts[2]);
    f.q = doubles(8, counts[3]);
    f.mu = doubles(9, counts[4]);
    f.r = doubles(10, counts[5]);
    if (bit(11)) f.title = at < size ? std::string(reinterpret_cast<const char*>(data) + at, size - at) : std::string();
    f.equalities = bit(12);
    f.indicesAsReals = bit(13);
    f.wideIndices = bit(14);
    f.global = bit(15);
    return f;
}

}  // namespace moreau::test
