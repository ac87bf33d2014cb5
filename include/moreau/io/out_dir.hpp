#pragma once
/// An output folder other users may write into (INTERFACE.md: one run per
/// output folder; files are never created through a symbolic link): the lock
/// that holds the folder for a run's life, and the two ways a file is written
/// in it — whole and atomically (summary.json, VTK snapshots, the checkpoint)
/// or as a stream (series.csv, log.txt).
///
/// A name in the folder that exists and is not a regular file (a symbolic
/// link to a file, /dev/null, a FIFO) is written in place, through it, never
/// replaced (docs/scenes.md); a symbolic link whose target does not exist is
/// refused (that would create a file through it). Temporaries get unique
/// names, created with O_EXCL | O_NOFOLLOW, so a planted link or a second
/// writer is never followed or clobbered.
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace moreau {

/// The lock file's name inside a held folder.
inline constexpr const char* kOutDirLockName = ".moreau-lock";

/// Holds an output folder for one run: an exclusive flock(2) on
/// DIR/.moreau-lock, which names the holder (pid, host, start time) for the
/// message a second run gets. The kernel drops the lock when the holder's
/// process ends, however it ends, so a lock left by a killed run is taken
/// over by the next. The file is removed when the lock is released.
class OutDirLock {
public:
    OutDirLock() = default;  ///< holds nothing
    /// Locks `dir` (which must exist). `option` names the folder in messages
    /// ("--out", "--resume", "out="). Throws InputError with one line: the
    /// folder is held by another run ("--out 'DIR': in use by moreau pid N on
    /// HOST (started ...)"), the lock file is a symbolic link or not a
    /// regular file, or it cannot be created (the folder is not writable).
    OutDirLock(const std::filesystem::path& dir, const std::string& option);
    ~OutDirLock() { release(); }
    OutDirLock(OutDirLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }
    OutDirLock& operator=(OutDirLock&& other) noexcept;
    OutDirLock(const OutDirLock&) = delete;
    OutDirLock& operator=(const OutDirLock&) = delete;

    bool held() const { return fd_ >= 0; }
    /// Removes the lock file (while still holding it, so no other run can
    /// be holding that file) and releases the lock. Safe to call twice.
    void release() noexcept;

private:
    std::filesystem::path path_;  ///< DIR/.moreau-lock
    int fd_ = -1;
};

/// The name a temporary stands for: `base` for `base`.XXXXXX.tmp (as
/// writeFileAtomically names them) and for `base`.tmp (as older versions
/// did); empty for any other name. What a killed run leaves and a fresh run
/// removes.
std::string_view temporaryBase(std::string_view name);

/// Creates a file of a unique name `base`.XXXXXX.tmp beside `base` (O_CREAT |
/// O_EXCL | O_NOFOLLOW: never through a link, never an existing file) and
/// returns its open descriptor; `created` receives its path. Throws
/// InputError naming `base` when no such file can be made.
int createUniqueTemporary(const std::filesystem::path& base, std::filesystem::path& created);

/// Writes `bytes` to `file` through a unique temporary in the same folder
/// and a rename, so readers (ParaView polling a running simulation, the
/// checks, a resume after a kill) never see half a file; with `sync` the
/// temporary is flushed to the disk first. A `file` that exists and is not a
/// regular file is written in place (see above). Creates the folder if
/// needed. Throws InputError naming `file`; no temporary is left behind.
void writeFileAtomically(const std::filesystem::path& file, std::string_view bytes, bool sync = false);

/// A file written front to back (series.csv, log.txt): buffered, opened
/// without following a final symbolic link when it creates the file.
class OutputStream {
public:
    OutputStream() = default;
    /// Opens `file` truncated, or with `append` for appending. Throws
    /// InputError naming it when it cannot be opened.
    OutputStream(const std::filesystem::path& file, bool append);
    ~OutputStream();
    OutputStream(OutputStream&& other) noexcept;
    OutputStream& operator=(OutputStream&& other) noexcept;
    OutputStream(const OutputStream&) = delete;
    OutputStream& operator=(const OutputStream&) = delete;

    /// Buffers `text` (written once 64 KiB are buffered). Throws InputError
    /// when a write fails (a full disk).
    void write(std::string_view text);
    /// Hands the buffered bytes to the system; throws InputError when that fails.
    void flush();
    bool open() const { return fd_ >= 0; }

private:
    void close() noexcept;  ///< writes what is buffered (errors unreported), closes

    std::filesystem::path path_;
    std::string buffer_;
    int fd_ = -1;
};

/// An OutputStream as a std::ostream (the experiments' CSV files): what is
/// written with << goes out as OutputStream writes it, never through a link
/// to nothing, never creating a file through a link.
class OutputFile : public std::ostream {
public:
    /// Opens `file` truncated; throws InputError naming it when it cannot be opened.
    explicit OutputFile(const std::filesystem::path& file);
    OutputFile(OutputFile&& other) noexcept;
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    OutputFile& operator=(OutputFile&&) = delete;
    /// Writes what is buffered and closes the file; throws InputError when
    /// that fails (a full disk). Safe to call twice.
    void close();

private:
    class Buffer : public std::streambuf {
    public:
        explicit Buffer(OutputStream stream) : stream_(std::move(stream)) {}
        Buffer(Buffer&& other) noexcept : std::streambuf(), stream_(std::move(other.stream_)) {}
        OutputStream& stream() { return stream_; }

    protected:
        int_type overflow(int_type c) override;
        std::streamsize xsputn(const char* s, std::streamsize n) override;
        int sync() override;

    private:
        OutputStream stream_;
    };
    Buffer buffer_;
};

}  // namespace moreau
