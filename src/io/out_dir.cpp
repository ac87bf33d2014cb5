#include "moreau/io/out_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "moreau/core/error.hpp"

namespace moreau {

namespace fs = std::filesystem;

namespace {

std::string errorText(int error) { return std::strerror(error); }

bool sameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

/// Writes all of `bytes` to `fd`; false (errno set) when a write fails.
bool writeAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// Six characters of [0-9A-Za-z] that differ between processes and calls
/// (pid, a counter, the clock, mixed by SplitMix64); O_EXCL settles the rare clash.
std::string uniqueSuffix() {
    static std::atomic<std::uint64_t> counter{0};
    std::uint64_t x = (static_cast<std::uint64_t>(::getpid()) << 32) ^ counter.fetch_add(1) ^
                      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    static constexpr char kDigits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    std::string s(6, '0');
    for (char& c : s) {
        c = kDigits[x % 62];
        x /= 62;
    }
    return s;
}

/// Opens `file` for writing with `mode` (O_TRUNC or O_APPEND): a new or
/// regular file with O_CREAT | O_NOFOLLOW; a symbolic link (ELOOP) only to a
/// target that exists, without O_CREAT, so no file is created through it.
int openForWriting(const fs::path& file, int mode) {
    const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | mode;
    int fd = ::open(file.c_str(), flags | O_CREAT | O_NOFOLLOW, 0666);
    if (fd < 0 && errno == ELOOP) {
        fd = ::open(file.c_str(), flags);
        if (fd < 0 && errno == ENOENT)
            throw InputError("cannot open output file '" + file.string() +
                             "' for writing: a symbolic link to a missing file (no file is created through a link)");
    }
    if (fd < 0) throw InputError("cannot open output file '" + file.string() + "' for writing (" + errorText(errno) + ")");
    return fd;
}

/// Creates the folder that will hold `file`; failures surface when the file
/// itself is opened, with the file's name in the message.
void ensureParent(const fs::path& file) {
    const auto parent = file.parent_path();
    if (parent.empty()) return;
    std::error_code ec;
    fs::create_directories(parent, ec);
}

/// "moreau pid N on HOST (started YYYY-MM-DD HH:MM:SS)": what the lock file says.
std::string holderText() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    ::localtime_r(&now, &local);
    char started[32];
    std::strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S", &local);
    return "moreau pid " + std::to_string(::getpid()) + " on " + host + " (started " + started + ")\n";
}

/// The first line of what the holder wrote (at most 200 bytes).
std::string readHolder(int fd) {
    char buf[201] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    text = text.substr(0, text.find('\n'));
    return text.empty() ? "another moreau run (it has not named itself yet)" : text;
}

}  // namespace

// --- the lock -------------------------------------------------------------------

OutDirLock::OutDirLock(const fs::path& dir, const std::string& option) : path_(dir / kOutDirLockName) {
    const std::string where = option + " '" + dir.string() + "': ";
    // A holder removes the file when it ends: a run that opened it just
    // before may lock a file no longer in the folder; it then tries again.
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
        if (fd < 0) {
            const int error = errno;
            if (error == ELOOP)
                throw InputError(where + "its lock file '" + path_.string() +
                                 "' is a symbolic link (a run never follows one; remove it)");
            throw InputError(where + "the folder is not writable (cannot create its lock file '" + path_.string() +
                             "': " + errorText(error) + ")");
        }
        struct stat opened {};
        if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
            ::close(fd);
            throw InputError(where + "its lock file '" + path_.string() + "' is not a regular file (remove it)");
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int error = errno;
            const std::string holder = readHolder(fd);
            ::close(fd);
            if (error == EWOULDBLOCK) throw InputError(where + "in use by " + holder);
            throw InputError(where + "cannot lock '" + path_.string() + "' (" + errorText(error) + ")");
        }
        struct stat named {};
        if (::lstat(path_.c_str(), &named) == 0 && sameFile(named, opened)) {
            fd_ = fd;
            break;
        }
        ::close(fd);
    }
    if (fd_ < 0) throw InputError(where + "cannot hold its lock file '" + path_.string() + "' (it keeps changing)");
    // The holder's name, for the message a second run gets; a taken-over
    // file loses the dead holder's.
    const std::string text = holderText();
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
        release();
        throw InputError(where + "cannot write its lock file '" + path_.string() + "' (disk full?)");
    }
}

OutDirLock& OutDirLock::operator=(OutDirLock&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

void OutDirLock::release() noexcept {
    if (fd_ < 0) return;
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::lstat(path_.c_str(), &named) == 0 && sameFile(held, named))
        ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
}

// --- files ------------------------------------------------------------------------

std::string_view temporaryBase(std::string_view name) {
    if (!name.ends_with(".tmp") || name.size() <= 4) return {};
    const std::size_t unique = 4 + 7;  // ".XXXXXX.tmp"
    if (name.size() > unique && name[name.size() - unique] == '.') return name.substr(0, name.size() - unique);
    return name.substr(0, name.size() - 4);
}

int createUniqueTemporary(const fs::path& base, fs::path& created) {
    int error = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
        fs::path tmp = base;
        tmp += '.';
        tmp += uniqueSuffix();
        tmp += ".tmp";
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0) {
            created = std::move(tmp);
            return fd;
        }
        error = errno;
        if (error != EEXIST) break;
    }
    throw InputError("cannot open output file '" + base.string() + "' for writing (its temporary: " +
                     errorText(error) + ")");
}

void writeFileAtomically(const fs::path& file, std::string_view bytes, bool sync) {
    ensureParent(file);
    struct stat st {};
    if (::lstat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        // Written in place, through it: a rename would replace it.
        struct stat target {};
        if (S_ISDIR(st.st_mode) || (::stat(file.c_str(), &target) == 0 && S_ISDIR(target.st_mode)))
            throw InputError("cannot write output file '" + file.string() + "': it is a directory");
        const int fd = openForWriting(file, O_TRUNC);
        const bool ok = writeAll(fd, bytes);
        const int error = errno;
        if (::close(fd) != 0 || !ok)
            throw InputError("cannot write output file '" + file.string() + "' (" + errorText(error) + ")");
        return;
    }
    fs::path tmp;
    const int fd = createUniqueTemporary(file, tmp);
    bool ok = writeAll(fd, bytes) && (!sync || ::fsync(fd) == 0);
    const int error = errno;
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
        ::unlink(tmp.c_str());
        throw InputError("cannot write output file '" + file.string() + "' (" + errorText(error) + "; disk full?)");
    }
    if (::rename(tmp.c_str(), file.c_str()) != 0) {
        const int renameError = errno;
        ::unlink(tmp.c_str());
        throw InputError("cannot rename '" + tmp.string() + "' to '" + file.string() + "': " + errorText(renameError));
    }
}

// --- OutputStream -------------------------------------------------------------------

OutputStream::OutputStream(const fs::path& file, bool append) : path_(file) {
    ensureParent(file);
    fd_ = openForWriting(file, append ? O_APPEND : O_TRUNC);
}

OutputStream::~OutputStream() { close(); }

void OutputStream::close() noexcept {
    if (fd_ < 0) return;
    writeAll(fd_, buffer_);  // errors here have no one to tell; flush() reports them
    buffer_.clear();
    ::close(fd_);
    fd_ = -1;
}

OutputStream::OutputStream(OutputStream&& other) noexcept
    : path_(std::move(other.path_)), buffer_(std::move(other.buffer_)), fd_(other.fd_) {
    other.fd_ = -1;
}

OutputStream& OutputStream::operator=(OutputStream&& other) noexcept {
    if (this != &other) {
        close();
        path_ = std::move(other.path_);
        buffer_ = std::move(other.buffer_);
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

void OutputStream::write(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= (std::size_t{1} << 16)) flush();
}

void OutputStream::flush() {
    if (buffer_.empty()) return;
    const bool ok = fd_ >= 0 && writeAll(fd_, buffer_);
    buffer_.clear();
    if (!ok) throw InputError("cannot write output file '" + path_.string() + "' (disk full?)");
}

// --- OutputFile ---------------------------------------------------------------------

OutputFile::OutputFile(const fs::path& file) : std::ostream(nullptr), buffer_(OutputStream(file, false)) {
    rdbuf(&buffer_);
}

OutputFile::OutputFile(OutputFile&& other) noexcept : std::ostream(std::move(other)), buffer_(std::move(other.buffer_)) {
    set_rdbuf(&buffer_);
}

void OutputFile::close() {
    OutputStream& s = buffer_.stream();
    if (!s.open()) return;
    s.flush();
    s = OutputStream();  // closes it
}

OutputFile::Buffer::int_type OutputFile::Buffer::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    stream_.write(std::string_view(&ch, 1));
    return c;
}

std::streamsize OutputFile::Buffer::xsputn(const char* s, std::streamsize n) {
    stream_.write(std::string_view(s, static_cast<std::size_t>(n)));
    return n;
}

int OutputFile::Buffer::sync() {
    try {
        stream_.flush();
        return 0;
    } catch (const InputError&) {
        return -1;
    }
}

}  // namespace moreau
