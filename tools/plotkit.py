"""Pieces the plot scripts tools/plot_*.py share.

`moreau experiment` runs a script as `/usr/bin/python3 tools/plot_NAME.py ...`;
Python puts the script's own folder first on sys.path, so `import plotkit`
finds this file from any working directory. Importing it selects the Agg
backend (no display needed) before pyplot is loaded.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the scripts take plt from here)

__all__ = ["plt", "number", "finish", "save"]


def number(text):
    """float(text), or nan where the cell is empty or not a number."""
    try:
        return float(text)
    except ValueError:
        return float("nan")


def finish(ax, title, xlabel=None, ylabel=None, log="", **legend):
    """Finishes one panel: log scales ("x", "y" or "xy" in `log`), axis labels,
    title, and a legend drawn with the keyword arguments in `legend`."""
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(**legend)


def save(fig, png, dpi=130):
    """Lays the figure out tightly and writes it to `png`."""
    fig.tight_layout()
    fig.savefig(png, dpi=dpi)
