#pragma once
/// Run output of INTERFACE.md: series.csv, summary.json, VTK (grains and the
/// contact-force network) with a run.pvd that ParaView opens as is.
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/contact/contact.hpp"
#include "moreau/core/profile.hpp"
#include "moreau/io/out_dir.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// One row of series.csv: diagnostics of one step.
struct StepRecord {
    long step = 0;
    double time = 0.0;
    double kineticEnergy = 0.0;     ///< translational, grains and mobile walls
    double rotationalEnergy = 0.0;  ///< grains
    std::size_t contacts = 0;       ///< contacts carrying a non-zero force
    int iterations = 0;             ///< CD sweeps this step (MD: 0)
    double residual = 0.0;          ///< CD relative change of the last sweep (MD: 0)
    /// CD natural-map error of the step's reactions where measured; NaN
    /// elsewhere (MD, before the first step, not asked for).
    double naturalError = std::numeric_limits<double>::quiet_NaN();
    double meanOverlap = 0.0;       ///< mean of max(−gap, 0) over force-carrying contacts
    double maxOverlap = 0.0;
    double elasticEnergy = 0.0;     ///< MD: energy stored in the contact springs (CD: 0, rigid grains)
    // Granular measurements (analysis/observables.hpp, Measurements).
    Mat3 stress = Mat3::Zero();     ///< grains' stress, compression positive
    double pressure = 0.0, deviator = 0.0, packingFraction = 0.0;
    double coordination = 0.0, coordinationNonRattlers = 0.0;
    Mat3 fabric = Mat3::Zero();     ///< (1/N_c) Σ n ⊗ n over force-carrying grain–grain contacts
    std::vector<Vec3> wallForce;    ///< per wall: the force the grains exert on it
    std::vector<Vec3> wallTorque;   ///< per wall: their torque about the wall's point
};

/// series.csv: header `step,time,kinetic_energy,rotational_energy,contacts,
/// iterations,residual,mean_overlap,max_overlap,elastic_energy,stress_xx,
/// stress_yy,stress_zz,stress_xy,stress_xz,stress_yz,pressure,deviator,
/// packing_fraction,coordination,coordination_nonrattlers,fabric_xx,
/// fabric_yy,fabric_zz,fabric_xy,fabric_xz,fabric_yz`, then `natural_error`
/// where asked for (output.natural_error), then in a periodic
/// world `cell_lx,cell_ly,cell_lz` (0 on axes that are not periodic) and,
/// under Lees–Edwards shear, `cell_shift`, then one
/// `wall_<name>_x,_y,_z` triple per mobile wall and one `wall_<name>_fx,_fy,
/// _fz,_tx,_ty,_tz` sextuple per wall (body order), then `stage` where the
/// run names its stages (output.stage). Numbers are written in the shortest
/// form that reads back to the same double.
class SeriesWriter {
public:
    /// Creates (truncates) `file`, creating its folder if needed, and writes the
    /// header. With `resumeAfter` >= 0 continues the file of a stopped run
    /// instead: it keeps the header (which must be this world's) and the rows
    /// up to that step, and appends. Throws InputError naming the path if it
    /// cannot be opened.
    SeriesWriter(const std::filesystem::path& file, const World& world, long resumeAfter = -1,
                 bool naturalError = false, bool stageColumn = false);
    /// One row; the wall columns are the current positions of the mobile walls
    /// found at construction, `stage` the stage column's field (where there
    /// is one). Throws InputError if the write fails.
    void write(const World& world, const StepRecord& r, const std::string& stage = {});
    /// Hands the buffered rows to the system; throws InputError if that fails.
    void flush();

private:
    OutputStream out_;
    std::vector<std::size_t> mobileWalls_;  ///< walls (body − numGrains) with a position column
    bool naturalColumn_ = false;                      ///< natural_error
    bool cellColumns_ = false, shiftColumn_ = false;  ///< cell_lx, _ly, _lz (periodic); cell_shift (Lees–Edwards)
    bool stageColumn_ = false;                        ///< stage (output.stage)
};

/// Writes `dir`/grains_XXXXXX.vtp, `dir`/contacts_XXXXXX.vtp and, when the
/// world has walls, `dir`/walls_XXXXXX.vtp (XML PolyData, ASCII; XXXXXX =
/// step, at least 6 digits) and keeps `dir`/run.pvd up to date (parts 0, 1,
/// 2) so a partial run opens too. `moreau run` passes OUT/vtk as `dir`.
/// Every file is written under a temporary name and renamed into place, so a
/// reader never sees half a file.
/// What the walls' snapshot shows of the grains: the box the walls are
/// drawn across (the grains' extent, centres ± radii; without grains ±1
/// about each wall's point) and each wall's load (wallLoads).
struct WallsView {
    bool grains = false;
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    std::vector<Vec3> force, torque;
};
/// The view of the whole world's grains and contacts.
WallsView wallsView(const World& world, const std::vector<Contact>& contacts);

/// The shapes' part of a snapshot: none (round grains), the clumps'
/// component spheres, or the polygons' outlines.
enum class VtkShapes { None, Spheres, Polygons };
/// A world's: Polygons with polygons, Spheres with clumps, else None.
VtkShapes vtkShapesOf(const World& world);

class VtkWriter {
public:
    /// Creates `dir` if needed; throws InputError naming it if that fails.
    /// With `resumeAfter` >= 0 continues the run.pvd of a stopped run: its
    /// snapshots up to that step stay listed, later ones are deleted.
    explicit VtkWriter(const std::filesystem::path& dir, long resumeAfter = -1);
    /// Grains: points with radius, velocity, angular_velocity, id and stress
    /// (grainStress, 9 components, row-major).
    /// Contacts: lines between the two centres (grain–wall: from the grain's
    /// centre to the contact point on its surface) with normal_force and
    /// tangential_force (vectors, from history.reaction split along n),
    /// force_magnitude, body ids a and b, and periodic (1 where the pair's
    /// minimum image differs from the raw difference) for contacts with
    /// non-zero force. Periodic pairs are drawn from x_a to x_a + minimum
    /// image, so lines never span the box.
    /// Walls: each plane a quad, each cylinder a band of quads, sized to
    /// the grains' extent (and the periodic box on periodic axes), with cell
    /// data name, index (body − numGrains), force and torque (as in
    /// series.csv). With clumps: the grains' `orientation` (w, x, y, z),
    /// each contact's `contact_point`, and a fourth part, shapes_XXXXXX.vtp,
    /// one point per component sphere (radius, grain id) for sphere glyphs.
    /// Writing the same step again replaces its entry.
    /// With `pieces` > 0 the ranks have written the grains and contacts as
    /// pieces (writeVtkPiece): this writes grains_XXXXXX.pvtp and
    /// contacts_XXXXXX.pvtp over them (and the walls from `world`), and
    /// run.pvd lists those.
    void write(const World& world, const std::vector<Contact>& contacts, long step, double time, int pieces = 0);
    /// The parallel files over the ranks' `pieces` and the walls, from
    /// what the ranks reduced (`walls`), with no grain at hand: `world`
    /// gives the walls, the cell and the clock (a rank's part of it).
    /// With `shapes`, the ranks' shapes pieces too (shapes_XXXXXX.pvtp).
    void writeParallel(const World& world, const WallsView& walls, long step, double time, int pieces,
                       VtkShapes shapes = VtkShapes::None);

private:
    std::filesystem::path dir_;
    std::vector<std::pair<double, std::string>> grainFiles_, contactFiles_, wallFiles_, shapeFiles_;
    void writePvd() const;
};

/// One rank's piece of a snapshot (output.vtk_pieces): the grains `grains`
/// (local indices) with the global `ids` of the local bodies and `stress` by
/// local grain, as `dir`/grains_XXXXXX_pR.vtp, and `contacts` (the rank's
/// own) as `dir`/contacts_XXXXXX_pR.vtp, in VtkWriter's layout; with
/// `shapes` (the run's, whatever this part holds), those grains' component
/// spheres or outlines as `dir`/shapes_XXXXXX_pR.vtp.
void writeVtkPiece(const std::filesystem::path& dir, const World& world, std::span<const std::size_t> grains,
                   std::span<const std::uint64_t> ids, std::span<const Mat3> stress,
                   const std::vector<Contact>& contacts, long step, int rank, VtkShapes shapes = VtkShapes::None);

/// Write a JSON document atomically (temporary file, then rename), indented by
/// 2. Throws InputError naming the path if it cannot be written.
void writeJsonFile(const std::filesystem::path& file, const nlohmann::json& doc);

/// summary.json's phase_seconds: the seconds of each stage of the steps
/// (core/profile.hpp), with CD's solve in parts where `cd`.
nlohmann::json phaseSeconds(const StepProfile& profile, bool cd);

}  // namespace moreau
