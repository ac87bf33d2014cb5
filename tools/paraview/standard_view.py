"""The standard view of a Moreau run in ParaView: grains as spheres of their
radius (translucent), the force chains as tubes coloured and scaled by the
contact force, seen through the grains, and the walls.

    xvfb-run -a pvbatch tools/paraview/standard_view.py OUT_DIR [PICTURE.png] [--step N]

OUT_DIR is a run's folder (`moreau run ... --out OUT_DIR` with
output.vtk_every > 0); the picture (default OUT_DIR/view.png) shows the last
snapshot, or step N. In the ParaView GUI: File > Python Shell > Run Script,
with sys.argv set, or open OUT_DIR/vtk/run.pvd and do the same by hand
(docs/scenes.md, "VTK snapshots")."""
import glob
import os
import sys

from paraview.simple import (CellDatatoPointData, ColorBy, GetActiveViewOrCreate, GetColorTransferFunction,
                             GetScalarBar, Glyph, Render, ResetCamera, SaveScreenshot, Show, Tube, XMLPolyDataReader)


def snapshot(folder, kind, step):
    files = sorted(glob.glob(os.path.join(folder, "vtk", f"{kind}_*.vtp")))
    if step is not None:
        files = [f for f in files if f.endswith(f"_{step:06d}.vtp")]
    return files[-1] if files else None


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    step = None
    if "--step" in argv:
        step = int(argv[argv.index("--step") + 1])
        args.remove(str(step))
    if not args:
        sys.exit(__doc__)
    folder = args[0]
    picture = args[1] if len(args) > 1 else os.path.join(folder, "view.png")
    grains_file = snapshot(folder, "grains", step)
    if grains_file is None:
        sys.exit(f"standard_view: no vtk/grains_*.vtp in {folder} (run with output.vtk_every > 0)")
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [1000, 750]
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.Background = [1, 1, 1]
    view.OrientationAxesVisibility = 0

    grains = XMLPolyDataReader(FileName=[grains_file])
    spheres = Glyph(Input=grains, GlyphType="Sphere")
    spheres.GlyphType.ThetaResolution = 24
    spheres.GlyphType.PhiResolution = 24
    spheres.ScaleArray = ["POINTS", "radius"]
    spheres.ScaleFactor = 2.0  # the sphere source's radius is 0.5
    spheres.GlyphMode = "All Points"
    shown = Show(spheres, view)
    ColorBy(shown, None)
    shown.AmbientColor = shown.DiffuseColor = [0.75, 0.75, 0.78]
    shown.Opacity = 0.35

    contacts_file = snapshot(folder, "contacts", step)
    if contacts_file:
        contacts = XMLPolyDataReader(FileName=[contacts_file])
        r_mean = float(sum(grains.PointData["radius"].GetRange()) / 2)
        # The tube filter scales by point data: each line's force onto its two ends.
        tubes = Tube(Input=CellDatatoPointData(Input=contacts))
        tubes.Scalars = ["POINTS", "force_magnitude"]
        tubes.Radius = 0.04 * r_mean
        tubes.VaryRadius = "By Scalar"
        tubes.RadiusFactor = 10.0
        tubes.NumberofSides = 12
        chains = Show(tubes, view)
        ColorBy(chains, ("POINTS", "force_magnitude"))
        lut = GetColorTransferFunction("force_magnitude")
        lut.ApplyPreset("Inferno (matplotlib)", True)
        chains.SetScalarBarVisibility(view, True)
        bar = GetScalarBar(lut, view)
        bar.Title = "contact force"
        bar.ComponentTitle = ""
        bar.TitleColor = bar.LabelColor = [0.0, 0.0, 0.0]

    walls_file = snapshot(folder, "walls", step)
    if walls_file:
        walls = Show(XMLPolyDataReader(FileName=[walls_file]), view)
        ColorBy(walls, None)
        walls.AmbientColor = walls.DiffuseColor = [0.3, 0.3, 0.3]
        walls.Opacity = 0.12

    # 2D runs (every z 0) face the x–y plane; 3D runs are seen from a corner, z up.
    bounds = grains.GetDataInformation().GetBounds()
    flat = bounds[5] - bounds[4] == 0.0
    centre = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
    view.CameraFocalPoint = centre
    if flat:
        view.CameraPosition = [centre[0], centre[1], centre[2] + 10.0]
        view.CameraViewUp = [0.0, 1.0, 0.0]
    else:
        view.CameraPosition = [centre[0] + 1.6, centre[1] - 2.2, centre[2] + 1.3]
        view.CameraViewUp = [0.0, 0.0, 1.0]
    ResetCamera(view)
    Render(view)
    SaveScreenshot(picture, view, ImageResolution=[1000, 750])
    print(picture)


main(sys.argv[1:])
