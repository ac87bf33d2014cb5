#pragma once
/// The progress line of a long command on a terminal: `moreau experiment`
/// and `moreau bench` (registry.cpp opens one per command). A watcher thread
/// redraws it in place on stderr twice a second:
///
///   stress-probes  37.5 %  2m05s, ETA 3m28s  1 204 311 steps  spheres probe 27/72
///
/// The fraction comes from the command's plan: units it declared with
/// expectUnits() and counted with advance(), else simulation steps it
/// declared with expectSteps() (every Simulation counts its steps with
/// stepDone()); without a plan the line has the elapsed time, the steps and
/// the note only. Nothing is drawn where stderr is not a terminal or the
/// command is quiet, and the functions below cost an atomic add when no line
/// is open. The line is cleared when the command ends, before its results.
#include <cstdio>
#include <string>

namespace moreau::progress {

/// Opens the process's line (one at a time; `enabled` false: a line that
/// draws nothing). Closing it clears the line and forgets the plan.
class Line {
public:
    Line(std::string label, bool enabled);
    ~Line();
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;

private:
    bool enabled_;
};

/// While one lives the line is cleared and not drawn (a plot script's or a
/// warning's output on stderr between).
class Pause {
public:
    Pause();
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;
};

/// Whether stderr is a terminal (where a Line draws).
bool terminal();
/// The command will do about `total` simulation steps in all (any thread).
void expectSteps(double total);
/// The command's plan in its own units (runs, probes, methods): `total` of them.
void expectUnits(double total);
/// `n` of those units are done (any thread).
void advance(double n = 1.0);
/// What the command is doing now (shown after the counts).
void note(const std::string& text);
/// Whether a line is open (a command is running with one).
bool open();
/// note() with printf's formatting (at most 255 characters), done only where a line is open.
template <class... Args>
void notef(const char* fmt, Args... args) {
    if (!open()) return;
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    note(buf);
}
/// One simulation step done (Simulation::integrate).
void stepDone();

/// The line as drawn after `seconds` (for tests): label, percentage and ETA
/// where there is a plan, elapsed time, steps, note.
std::string text(double seconds);

}  // namespace moreau::progress
