#include "moreau/core/progress.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace moreau::progress {

namespace {

std::atomic<long long> gSteps{0};
std::atomic<double> gUnits{0.0};
std::atomic<double> gExpectSteps{0.0}, gExpectUnits{0.0};

struct Shared {
    std::mutex m;
    std::condition_variable wake;
    std::string label, note;
    bool open = false, stop = false;
    std::thread watcher;
    std::size_t drawn = 0;  ///< characters of the last line drawn
    int paused = 0;         ///< Pause objects alive
};
Shared& shared() {
    static Shared s;
    return s;
}

std::string duration(double s) {
    char buf[32];
    const long t = std::lround(s);
    if (t < 60) std::snprintf(buf, sizeof buf, "%lds", t);
    else if (t < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
    return buf;
}

/// 1234567 as "1 234 567".
std::string grouped(long long n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
        out += digits[i];
    }
    return out;
}

void clear(Shared& s) {
    if (s.drawn == 0) return;
    std::fprintf(stderr, "\r%s\r", std::string(s.drawn, ' ').c_str());
    std::fflush(stderr);
    s.drawn = 0;
}

void draw(Shared& s, const std::string& line) {
    std::string padded = line;
    if (padded.size() < s.drawn) padded.append(s.drawn - padded.size(), ' ');
    std::fprintf(stderr, "\r%s", padded.c_str());
    std::fflush(stderr);
    s.drawn = line.size();
}

}  // namespace

bool terminal() { return isatty(fileno(stderr)) != 0; }

void expectSteps(double total) { gExpectSteps.store(total, std::memory_order_relaxed); }
void expectUnits(double total) { gExpectUnits.store(total, std::memory_order_relaxed); }
void advance(double n) { gUnits.fetch_add(n, std::memory_order_relaxed); }
void stepDone() { gSteps.fetch_add(1, std::memory_order_relaxed); }
bool open() {
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.m);
    return s.open;
}
void note(const std::string& text) {
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.m);
    if (s.open) s.note = text;
}

std::string text(double seconds) {
    Shared& s = shared();
    std::string label, note;
    {
        std::lock_guard<std::mutex> lock(s.m);
        label = s.label;
        note = s.note;
    }
    const long long steps = gSteps.load(std::memory_order_relaxed);
    const double units = gUnits.load(std::memory_order_relaxed);
    const double totalUnits = gExpectUnits.load(std::memory_order_relaxed);
    const double totalSteps = gExpectSteps.load(std::memory_order_relaxed);
    double f = -1.0;
    if (totalUnits > 0.0) f = units / totalUnits;
    else if (totalSteps > 0.0) f = static_cast<double>(steps) / totalSteps;
    std::string line = label;
    char buf[64];
    if (f >= 0.0) {
        f = std::min(f, 1.0);
        std::snprintf(buf, sizeof buf, "  %5.1f %%", 100.0 * f);
        line += buf;
    }
    line += "  " + duration(seconds);
    // An estimate once a little is done: the rest at the rate so far.
    if (f > 0.005 && seconds > 2.0) line += ", ETA " + duration(seconds * (1.0 - f) / f);
    if (steps > 0) line += "  " + grouped(steps) + " steps";
    if (!note.empty()) line += "  " + note;
    return line;
}

Line::Line(std::string label, bool enabled) : enabled_(enabled) {
    Shared& s = shared();
    gSteps = 0;
    gUnits = 0.0;
    gExpectSteps = 0.0;
    gExpectUnits = 0.0;
    std::lock_guard<std::mutex> lock(s.m);
    s.label = std::move(label);
    s.note.clear();
    s.open = true;
    s.stop = false;
    s.drawn = 0;
    if (!enabled_) return;
    s.watcher = std::thread([&s] {
        const auto t0 = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(s.m);
        // The first line after a second: short commands draw nothing.
        for (auto wait = std::chrono::milliseconds(1000); !s.wake.wait_for(lock, wait, [&s] { return s.stop; });
             wait = std::chrono::milliseconds(500)) {
            lock.unlock();
            const std::string line =
                text(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            lock.lock();
            if (!s.stop && s.paused == 0) draw(s, line);
        }
    });
}

Line::~Line() {
    Shared& s = shared();
    {
        std::lock_guard<std::mutex> lock(s.m);
        s.stop = true;
        s.open = false;
    }
    s.wake.notify_all();
    if (s.watcher.joinable()) s.watcher.join();
    clear(s);
    gExpectSteps = 0.0;
    gExpectUnits = 0.0;
}

Pause::Pause() {
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.m);
    ++s.paused;
    clear(s);
}

Pause::~Pause() {
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.m);
    --s.paused;
}

}  // namespace moreau::progress
