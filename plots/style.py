"""One paper-like style for every gnnbed figure: matplotlib only, no seaborn."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

PAPER_STYLE = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.bbox": "tight",
    "savefig.dpi": 200,
}


def figure(width_inches=3.4, height_inches=2.4, **kwargs):
    """A single-column figure in the paper style."""
    plt.rcParams.update(PAPER_STYLE)
    return plt.subplots(figsize=(width_inches, height_inches), **kwargs)


def save(fig, stem):
    """Writes stem.png and stem.pdf and returns their paths."""
    paths = [f"{stem}.png", f"{stem}.pdf"]
    for path in paths:
        fig.savefig(path)
    plt.close(fig)
    return paths
