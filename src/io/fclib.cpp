#include "moreau/io/fclib.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "moreau/core/error.hpp"

#ifdef MOREAU_HAVE_FCLIB
#include <hdf5.h>
extern "C" {
#include <fclib.h>
}
#endif

namespace moreau {

namespace {

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
    // Declared counts against the numbers the file holds, before any allocation.
    auto holds = [&](double numbers, const std::string& what) {
        if (numbers > static_cast<double>(tok.size() - at))
            throw InputError(path + ": declares " + what + " but holds only " + std::to_string(tok.size() - at) +
                             " more tokens (format FC3D 1: see docs/convergence.md)");
    };
    holds(4.0 * static_cast<double>(nc), std::to_string(nc) + " contacts (4 numbers each for mu and q)");
    p.mu.resize(nc);
    p.q.resize(3 * nc);
    for (double& m : p.mu) m = number("mu");
    for (double& v : p.q) v = number("q");
    if (next("W") != "W") throw InputError(path + ": expected 'W' after q");
    const std::string kind = next("the storage of W");
    const auto n = static_cast<std::int64_t>(3 * nc);
    Triplets t;
    if (kind == "dense") {
        holds(static_cast<double>(n) * static_cast<double>(n), "a dense W of " + std::to_string(n) + " x " +
                                                                   std::to_string(n) + " numbers");
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                if (const double v = number("W"); v != 0.0 || i / 3 == j / 3) t.add(i, j, v);
    } else if (kind == "triplet") {
        const std::int64_t nnz = count("nnz");
        holds(3.0 * static_cast<double>(nnz), std::to_string(nnz) + " W entries (3 numbers each)");
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
// --- FCLIB's HDF5 layout, read by Moreau itself ------------------------------
// libfclib's fclib_read_local sizes its buffers from the file's m, n, nz and
// nzmax and then reads whole datasets into them: a file whose datasets are
// longer than it declares overflows them. Moreau reads the same layout
// (/fclib_local/{spacedim, W/{m,n,nz,nzmax,p,i,x}, vectors/{q,mu}, info},
// /solution/r) through HDF5 directly, sizing every buffer from the dataset's
// own extent and checking every size, index and pointer before use.

/// An HDF5 identifier closed when it goes out of scope.
class H5Id {
public:
    H5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
    ~H5Id() {
        if (id_ >= 0) close_(id_);
    }
    H5Id(const H5Id&) = delete;
    H5Id& operator=(const H5Id&) = delete;
    hid_t get() const { return id_; }
    bool ok() const { return id_ >= 0; }

private:
    hid_t id_;
    herr_t (*close_)(hid_t);
};

/// HDF5's own error printing off while a file is read: the reader's message
/// says what is wrong.
class QuietHdf5 {
public:
    QuietHdf5() {
        H5Eget_auto2(H5E_DEFAULT, &handler_, &data_);
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, handler_, data_); }
    QuietHdf5(const QuietHdf5&) = delete;
    QuietHdf5& operator=(const QuietHdf5&) = delete;

private:
    H5E_auto2_t handler_ = nullptr;
    void* data_ = nullptr;
};

/// The most entries Moreau reads from one dataset (2^28: 2 GiB of doubles),
/// and W's most rows (its indices are C ints in FCLIB).
constexpr std::uint64_t kMaxEntries = std::uint64_t{1} << 28;
constexpr long long kMaxRows = 0x7ffffffe;

class FclibReader {
public:
    FclibReader(hid_t file, std::string name) : file_(file), name_(std::move(name)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(name_ + ": " + what + " (FCLIB local problem: docs/convergence.md)");
    }

    /// Whether the object at `path` ("/a/b/c") exists, each link checked in turn.
    bool has(const std::string& path) const {
        for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
            const std::string prefix = path.substr(0, at);
            if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
            if (at == std::string::npos) return true;
        }
    }

    /// A dataset's entries, as `memType` (its class must be `cls`): a list
    /// (1-D) or a single value, whose storage holds what its extent declares.
    template <class T>
    std::vector<T> array(const std::string& path, H5T_class_t cls, hid_t memType) const {
        if (!has(path)) fail("'" + path + "' is missing");
        const H5Id d(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
        if (!d.ok()) fail("'" + path + "' is not a dataset");
        const H5Id type(H5Dget_type(d.get()), H5Tclose);
        const H5Id space(H5Dget_space(d.get()), H5Sclose);
        if (!type.ok() || !space.ok()) fail("'" + path + "' cannot be read");
        if (H5Tget_class(type.get()) != cls)
            fail("'" + path + "' holds " + (cls == H5T_INTEGER ? "non-integers" : "non-reals") + " (allowed: " +
                 (cls == H5T_INTEGER ? "integers)" : "floating-point numbers)"));
        std::uint64_t n = 0;
        const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
        if (shape == H5S_SCALAR) {
            n = 1;
        } else if (shape == H5S_SIMPLE && H5Sget_simple_extent_ndims(space.get()) == 1) {
            hsize_t dim = 0;
            H5Sget_simple_extent_dims(space.get(), &dim, nullptr);
            n = dim;
        } else {
            fail("'" + path + "' is not a list of numbers (allowed: a 1-D dataset)");
        }
        if (n > kMaxEntries)
            fail("'" + path + "' has " + std::to_string(n) + " entries (allowed: at most " +
                 std::to_string(kMaxEntries) + ")");
        // A dataset may declare an extent and store nothing (its fill value):
        // the bytes it stores must account for its entries, compressed (by at
        // most ~1000:1, deflate's limit) or not.
        const std::uint64_t bytes = n * H5Tget_size(type.get());
        const std::uint64_t stored = H5Dget_storage_size(d.get());
        if (bytes > 4096 && stored < bytes / 1024)
            fail("'" + path + "' declares " + std::to_string(n) + " entries but stores " + std::to_string(stored) +
                 " bytes");
        std::vector<T> v(static_cast<std::size_t>(n));
        if (n > 0 && H5Dread(d.get(), memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
            fail("'" + path + "' cannot be read as " + (cls == H5T_INTEGER ? "integers" : "reals"));
        return v;
    }
    std::vector<long long> integers(const std::string& path) const {
        return array<long long>(path, H5T_INTEGER, H5T_NATIVE_LLONG);
    }
    std::vector<double> reals(const std::string& path) const {
        return array<double>(path, H5T_FLOAT, H5T_NATIVE_DOUBLE);
    }
    long long integer(const std::string& path) const {
        const std::vector<long long> v = integers(path);
        if (v.size() != 1) fail("'" + path + "' holds " + std::to_string(v.size()) + " values (allowed: one)");
        return v[0];
    }
    /// An optional fixed-length string (FCLIB's info); empty when absent or of another kind.
    std::string text(const std::string& path) const {
        if (!has(path)) return {};
        const H5Id d(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
        if (!d.ok()) return {};
        const H5Id type(H5Dget_type(d.get()), H5Tclose);
        const H5Id space(H5Dget_space(d.get()), H5Sclose);
        if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
            H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
            return {};
        const std::size_t size = H5Tget_size(type.get());
        if (size == 0 || size > (1u << 20)) return {};
        std::string s(size + 1, '\0');
        if (H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()) < 0) return {};
        s.resize(std::strlen(s.c_str()));
        return s;
    }

    LocalProblem read() const {
        if (!has("/fclib_local"))
            fail(has("/fclib_global") ? "a global problem (allowed: a local one, group /fclib_local)"
                                      : "no group /fclib_local: not an FCLIB local problem");
        if (const long long d = integer("/fclib_local/spacedim"); d != 3)
            fail("spacedim " + std::to_string(d) + " (allowed: 3)");
        if (has("/fclib_local/V") || has("/fclib_local/R")) fail("has equality constraints V, R (allowed: none)");
        const std::string w = "/fclib_local/W/";
        const long long m = integer(w + "m"), n = integer(w + "n"), nz = integer(w + "nz"),
                        nzmax = integer(w + "nzmax");
        if (m != n || m < 0 || m % 3 != 0 || m > kMaxRows)
            fail("W is " + std::to_string(m) + " x " + std::to_string(n) +
                 " (allowed: square, 3 rows per contact, at most " + std::to_string(kMaxRows) + " rows)");
        if (nzmax < 0 || static_cast<std::uint64_t>(nzmax) > kMaxEntries)
            fail("W/nzmax " + std::to_string(nzmax) + " (allowed: 0 to " + std::to_string(kMaxEntries) + ")");
        const std::vector<long long> p = integers(w + "p"), idx = integers(w + "i");
        const std::vector<double> x = reals(w + "x");
        auto sized = [&](const char* what, std::size_t has, long long want) {
            if (static_cast<long long>(has) != want)
                fail("W/" + std::string(what) + " holds " + std::to_string(has) + " entries (W/m, W/nz, W/nzmax " +
                     "declare " + std::to_string(want) + ")");
        };
        sized("x", x.size(), nzmax);
        LocalProblem prob;
        const auto nc = static_cast<std::size_t>(m / 3);
        Triplets t;
        auto entry = [&](long long k, long long row, long long col) {
            if (row < 0 || row >= m || col < 0 || col >= n)
                fail("W entry " + std::to_string(k) + " at (" + std::to_string(row) + ", " + std::to_string(col) +
                     ") lies outside 0.." + std::to_string(m - 1));
            const double v = x[static_cast<std::size_t>(k)];
            if (!std::isfinite(v)) fail("W entry " + std::to_string(k) + " is not finite (allowed: finite reals)");
            t.add(row, col, v);
        };
        if (nz >= 0) {  // triplets: rows in p, columns in i
            if (nz > nzmax) fail("W/nz " + std::to_string(nz) + " exceeds W/nzmax " + std::to_string(nzmax));
            sized("p", p.size(), nz);
            sized("i", idx.size(), nz);
            for (long long k = 0; k < nz; ++k) entry(k, p[static_cast<std::size_t>(k)], idx[static_cast<std::size_t>(k)]);
        } else if (nz == -1 || nz == -2) {  // compressed columns (-1) or rows (-2)
            const bool csc = nz == -1;
            sized("p", p.size(), (csc ? n : m) + 1);
            sized("i", idx.size(), nzmax);
            if (p.front() != 0) fail("W/p starts at " + std::to_string(p.front()) + " (allowed: 0)");
            for (std::size_t o = 0; o + 1 < p.size(); ++o)
                if (p[o + 1] < p[o] || p[o + 1] > nzmax)
                    fail("W/p[" + std::to_string(o + 1) + "] = " + std::to_string(p[o + 1]) +
                         " (allowed: non-decreasing, at most W/nzmax = " + std::to_string(nzmax) + ")");
            for (std::size_t o = 0; o + 1 < p.size(); ++o)
                for (long long k = p[o]; k < p[o + 1]; ++k) {
                    const long long inner = idx[static_cast<std::size_t>(k)], outer = static_cast<long long>(o);
                    entry(k, csc ? inner : outer, csc ? outer : inner);
                }
        } else {
            fail("W/nz " + std::to_string(nz) + " (allowed: >= 0 triplets, -1 compressed columns, -2 compressed rows)");
        }
        prob.q = reals("/fclib_local/vectors/q");
        prob.mu = reals("/fclib_local/vectors/mu");
        if (static_cast<long long>(prob.q.size()) != m)
            fail("q holds " + std::to_string(prob.q.size()) + " numbers (W has " + std::to_string(m) + " rows)");
        if (prob.mu.size() != nc)
            fail("mu holds " + std::to_string(prob.mu.size()) + " numbers (W has " + std::to_string(nc) + " contacts)");
        prob.title = text("/fclib_local/info/title");
        prob.description = text("/fclib_local/info/description");
        setBlocks(prob, t, name_);
        checkShape(prob, name_);
        if (has("/solution/r")) {
            std::vector<double> r = reals("/solution/r");
            if (r.size() != prob.q.size())
                fail("the solution's r holds " + std::to_string(r.size()) + " numbers (W has " + std::to_string(m) +
                     " rows)");
            prob.solution = std::move(r);
        }
        return prob;
    }

private:
    hid_t file_;
    std::string name_;
};

/// W in compressed columns (FCLIB's nz = −1), the form libfclib's products
/// (fclib_merit_local) read.
struct CompressedColumns {
    std::vector<int> p, i;
    std::vector<double> x;
    fclib_matrix matrix{};
};

void compressColumns(const LocalProblem& prob, CompressedColumns& c) {
    const std::size_t n = 3 * prob.contacts();
    std::vector<std::size_t> count(n + 1, 0);
    for (std::size_t bi = 0; bi < prob.contacts(); ++bi)
        for (std::size_t k = prob.rowStart[bi]; k < prob.rowStart[bi + 1]; ++k)
            for (int cc = 0; cc < 3; ++cc) count[3 * static_cast<std::size_t>(prob.col[k]) + cc + 1] += 3;
    c.p.assign(n + 1, 0);
    for (std::size_t j = 0; j < n; ++j) c.p[j + 1] = c.p[j] + static_cast<int>(count[j + 1]);
    c.i.assign(static_cast<std::size_t>(c.p[n]), 0);
    c.x.assign(static_cast<std::size_t>(c.p[n]), 0.0);
    std::vector<int> next(c.p.begin(), c.p.end() - 1);
    for (std::size_t bi = 0; bi < prob.contacts(); ++bi)  // block rows ascending: rows ascend in each column
        for (std::size_t k = prob.rowStart[bi]; k < prob.rowStart[bi + 1]; ++k)
            for (int cc = 0; cc < 3; ++cc)
                for (int rr = 0; rr < 3; ++rr) {
                    const std::size_t j = 3 * static_cast<std::size_t>(prob.col[k]) + static_cast<std::size_t>(cc);
                    const auto at = static_cast<std::size_t>(next[j]++);
                    c.i[at] = static_cast<int>(3 * bi) + rr;
                    c.x[at] = prob.block[k](rr, cc);
                }
    c.matrix.nzmax = c.p[n];
    c.matrix.m = c.matrix.n = static_cast<int>(n);
    c.matrix.p = c.p.data();
    c.matrix.i = c.i.data();
    c.matrix.x = c.x.data();
    c.matrix.nz = -1;
}

/// FCLIB's own merit (MERIT_1) of the problem's stored solution, from W in
/// compressed columns: an independent check of naturalError.
double fclibMerit(const LocalProblem& prob) {
    CompressedColumns W;
    compressColumns(prob, W);
    std::vector<double> mu = prob.mu, q = prob.q, r = prob.solution, u = prob.velocity(prob.solution);
    fclib_local f{};
    f.W = &W.matrix;
    f.mu = mu.data();
    f.q = q.data();
    f.spacedim = 3;
    fclib_solution s{nullptr, u.data(), r.data(), nullptr};
    return fclib_merit_local(&f, MERIT_1, &s);
}

LocalProblem readFclib(hid_t file, const std::string& name) {
    LocalProblem p = FclibReader(file, name).read();
    if (!p.solution.empty()) p.fclibMerit = fclibMerit(p);
    return p;
}
#endif

}  // namespace

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
        in.close();
        QuietHdf5 quiet;
        const H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
        if (!file.ok()) throw InputError(path + ": not a readable HDF5 file (allowed: an FCLIB local problem)");
        return readFclib(file.get(), path);
#else
        throw InputError(path + ": an HDF5 (FCLIB) file, and this build has no FCLIB (install libfclib-dev "
                         "libhdf5-dev and rebuild)");
#endif
    }
    return readText(path);
}

LocalProblem readFclibImage(const std::string& image, const std::string& name) {
#ifdef MOREAU_HAVE_FCLIB
    QuietHdf5 quiet;
    const H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 16, 0) < 0 ||
        H5Pset_file_image(fapl.get(), const_cast<char*>(image.data()), image.size()) < 0)
        throw InputError(name + ": cannot take the HDF5 image");
    const H5Id file(H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
    if (!file.ok()) throw InputError(name + ": not a readable HDF5 file (allowed: an FCLIB local problem)");
    return readFclib(file.get(), name);
#else
    (void)image;
    throw InputError(name + ": an HDF5 (FCLIB) image, and this build has no FCLIB (install libfclib-dev libhdf5-dev "
                     "and rebuild)");
#endif
}

void writeFclib(const LocalProblem& p, const std::string& path, const std::vector<double>* r) {
#ifdef MOREAU_HAVE_FCLIB
    // W in compressed columns, its entries as they are, symmetric or not to
    // the last bit: the form libfclib's own products (fclib_merit_local) read.
    CompressedColumns W;
    compressColumns(p, W);
    std::string title = p.title.empty() ? "Moreau contact dynamics step" : p.title;
    std::string description = p.description, math = "W = H^T M^-1 H (symmetric positive semi-definite)";
    fclib_info info{title.data(), description.data(), math.data()};
    std::vector<double> mu = p.mu, q = p.q;
    fclib_local f{};
    f.W = &W.matrix;
    f.mu = mu.data();
    f.q = q.data();
    f.spacedim = 3;
    f.info = &info;
    // libfclib opens the path itself (following a link, appending to a file
    // that is there): the file is made in a private folder beside `path`
    // (mkdtemp: mode 0700, nothing can be planted in it) and renamed into
    // place, which replaces a link of that name instead of writing through it.
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::string folder = ((target.has_parent_path() ? target.parent_path() : fs::path(".")) / ".fclib-XXXXXX").string();
    if (!::mkdtemp(folder.data()))
        throw InputError("cannot write FCLIB problem '" + path + "': cannot make a temporary folder beside it");
    struct RemoveAfter {
        fs::path dir;
        ~RemoveAfter() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } removeAfter{folder};
    const std::string tmp = (fs::path(folder) / "problem.hdf5").string();
    if (!fclib_write_local(&f, tmp.c_str())) throw InputError("cannot write FCLIB problem '" + path + "'");
    if (r) {
        std::vector<double> rr = *r, u = p.velocity(*r);
        fclib_solution s{nullptr, u.data(), rr.data(), nullptr};
        if (!fclib_write_solution(&s, tmp.c_str())) throw InputError("cannot write FCLIB solution to '" + path + "'");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) throw InputError("cannot write FCLIB problem '" + path + "': " + ec.message());
#else
    (void)p;
    (void)r;
    throw InputError("cannot write '" + path + "': this build has no FCLIB (install libfclib-dev libhdf5-dev and rebuild)");
#endif
}

}  // namespace moreau
