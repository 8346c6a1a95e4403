"""The figures of experiments/reproduce: one function per plot kind, each drawing a figure's
points (the JSON the driver writes next to the figure) in the paper style of style.py.

A spec's "plot" names the kind and its fields; see experiments/figures/README.md. Every function
takes the figure record, the folder of raw results (traces) and the output stem, and writes
stem.png and stem.pdf."""
import functools
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

PLAIN = FuncFormatter(lambda v, _: f"{v:g}")
# Minor ticks of a log axis: only 2 and 5 between the decades (all of them crowd the axis).
SPARSE = FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else "")

COLOURS = {"dgl-pull": "tab:blue", "p3": "tab:orange", "roc": "tab:green", "sancus": "tab:purple"}
PART_COLOURS = {"sampling": "#4c72b0", "copy": "#dd8452", "compute": "#55a868",
                "communication": "#c44e52", "waiting": "#8c8c8c"}
QUANTITY_LABELS = {
    "epoch_seconds": "epoch time (s)",
    "throughput_seeds_per_second": "throughput (training nodes/s)",
    "mean_bytes_sent": "bytes sent per rank per epoch",
    "busy_fraction": "GPU busy fraction",
}
FALLBACK = ["tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]


def colour(name, index=0):
    return COLOURS.get(name, FALLBACK[index % len(FALLBACK)])


def selected(points, select):
    out = []
    for p in points:
        ok = True
        for field, value in (select or {}).items():
            if field == "run":
                ok = ok and p["run"] == value
            elif isinstance(value, list):  # any of these values
                ok = ok and p["assignments"].get(field) in [str(v) for v in value]
            else:
                ok = ok and p["assignments"].get(field) == str(value)
        if ok:
            out.append(p)
    return out


def label_of(point, fields, names=None):
    """A bar group's tick label: its fields' values, one per line ("products-like" shortened,
    values renamed by the plot's value_labels)."""
    values = [point["assignments"].get(f, "") for f in fields]
    return "\n".join((names or {}).get(v, v.replace("-like", "")) for v in values if v)


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def out_of_memory_mark(ax, x):
    """"OOM" at the foot of a bar that did not fit: in axes height, so log axes can take it."""
    ax.text(x, 0.02, "OOM", rotation=90, ha="center", va="bottom", fontsize=6,
            transform=ax.get_xaxis_transform())


def series_label(plot, value):
    return plot.get("series_labels", {}).get(value, value)


def plain_log_axes(ax):
    """Log axes labelled with plain numbers (2, 8, 32; 0.1, 1, 10); base-10 minor ticks at 2
    and 5 labelled when the axis spans less than two decades."""
    for axis, scale, limits in ((ax.xaxis, ax.get_xscale(), ax.get_xlim()),
                                (ax.yaxis, ax.get_yscale(), ax.get_ylim())):
        if scale == "log":
            axis.set_major_formatter(PLAIN)
            narrow = limits[0] > 0 and limits[1] / limits[0] < 100
            axis.set_minor_formatter(SPARSE if narrow else NullFormatter())


def legend_place(plot):
    """matplotlib's legend placement from the spec: "outside" puts it right of the axes."""
    where = plot.get("legend_loc", "best")
    if where == "outside":
        return {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)}
    return {"loc": where}


def finish(fig, ax, plot, stem):
    plain_log_axes(ax)
    ax.set_title(plot.get("title", ""))
    if plot.get("legend", True) and ax.get_legend_handles_labels()[0]:
        ax.legend(**legend_place(plot))
    style.save(fig, stem)


def lines(figure, raw, stem):
    """y (a quantity) against a numeric x field, one line per series field value."""
    plot = figure["plot"]
    points = selected(figure["points"], plot.get("select"))
    x_field, series_field = plot["x"], plot["series"]
    y = plot.get("y", "epoch_seconds")
    fig, ax = style.figure(plot.get("width", 3.4), plot.get("height", 2.4))
    names = sorted({p["assignments"].get(series_field) for p in points},
                   key=lambda s: plot.get("series_order", []).index(s)
                   if s in plot.get("series_order", []) else 100)
    for i, name in enumerate(names):
        rows = sorted((as_number(p["assignments"][x_field]), p.get(y)) for p in points
                      if p["assignments"].get(series_field) == name and p.get(y) is not None)
        if rows:
            ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="o", markersize=3,
                    color=plot.get("colours", {}).get(name) or colour(name, i),
                    label=series_label(plot, name),
                    linestyle=plot.get("linestyles", {}).get(name, "-"))
        oom = [as_number(p["assignments"][x_field]) for p in points
               if p["assignments"].get(series_field) == name and p.get("out_of_memory")]
        for x in oom:
            ax.axvline(x, color=colour(name, i), linestyle=":", linewidth=0.8)
    if plot.get("ideal_from"):
        # Linear scaling from the first point of the named series: the paper's "linear".
        rows = sorted((as_number(p["assignments"][x_field]), p.get(y)) for p in points
                      if p["assignments"].get(series_field) == plot["ideal_from"]
                      and p.get(y) is not None)
        if rows:
            x0, y0 = rows[0]
            xs = [r[0] for r in rows]
            ax.plot(xs, [y0 * x / x0 for x in xs], color="black", linestyle="--", linewidth=0.7,
                    label="linear")
    if plot.get("logx"):
        ax.set_xscale("log", base=plot.get("logx_base", 2))
    if plot.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(plot["xlabel"])
    ax.set_ylabel(plot.get("ylabel", QUANTITY_LABELS.get(y, y)))
    finish(fig, ax, plot, stem)


def grouped_bars(figure, raw, stem):
    """One group of bars per value of the group fields, one bar per series value."""
    plot = figure["plot"]
    points = selected(figure["points"], plot.get("select"))
    group_fields, series_field = plot["group"], plot["series"]
    y = plot.get("y", "epoch_seconds")
    names_of = plot.get("value_labels")
    groups = []
    for p in points:
        key = label_of(p, group_fields, names_of)
        if key not in groups:
            groups.append(key)
    names = []
    for p in points:
        name = p["assignments"].get(series_field)
        if name not in names:
            names.append(name)
    width = 0.8 / max(1, len(names))
    fig, ax = style.figure(plot.get("width", max(3.4, 0.55 * len(groups) * len(names) / 2 + 1.5)),
                           plot.get("height", 2.4))
    for i, name in enumerate(names):
        for g, group in enumerate(groups):
            match = [p for p in points if p["assignments"].get(series_field) == name
                     and label_of(p, group_fields, names_of) == group]
            x = g - 0.4 + width * (i + 0.5)
            if not match:
                continue
            value = match[0].get(y)
            if value is None:
                out_of_memory_mark(ax, x)
                continue
            ax.bar(x, value, width, color=colour(name, i),
                   label=series_label(plot, name) if g == 0 or name not in
                   ax.get_legend_handles_labels()[1] else None)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    if plot.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(plot.get("xlabel", ""))
    ax.set_ylabel(plot.get("ylabel", QUANTITY_LABELS.get(y, y)))
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), **legend_place(plot))
    plot = dict(plot, legend=False)
    finish(fig, ax, plot, stem)


def breakdown_bars(figure, raw, stem):
    """Table 4: per group, one stacked bar per strategy of the mean rank's sampling, copy,
    compute, communication and waiting time, with the epoch time marked."""
    plot = figure["plot"]
    points = selected(figure["points"], plot.get("select"))
    group_fields, series_field = plot["group"], plot["series"]
    groups, names = [], []
    for p in points:
        if label_of(p, group_fields) not in groups:
            groups.append(label_of(p, group_fields))
        if p["assignments"].get(series_field) not in names:
            names.append(p["assignments"].get(series_field))
    width = 0.8 / max(1, len(names))
    fig, ax = style.figure(plot.get("width", max(3.4, 0.75 * len(groups) + 1.2)),
                           plot.get("height", 2.8))
    for i, name in enumerate(names):
        for g, group in enumerate(groups):
            match = [p for p in points if p["assignments"].get(series_field) == name
                     and label_of(p, group_fields) == group]
            if not match:
                continue
            p, x = match[0], g - 0.4 + width * (i + 0.5)
            if p.get("out_of_memory"):
                out_of_memory_mark(ax, x)
                continue
            bottom = 0.0
            for part, part_colour in PART_COLOURS.items():
                value = p["breakdown_mean_seconds"].get(part, 0.0) / p["epoch_seconds"]
                ax.bar(x, value, width * 0.95, bottom=bottom, color=part_colour,
                       hatch="//" if name == "p3" else None, edgecolor="white", linewidth=0.3,
                       label=part if (i == 0 and g == 0) else None)
                bottom += value
            ax.text(x, bottom + 0.02, f"{p['epoch_seconds']:.2g}", ha="center", va="bottom",
                    fontsize=5, rotation=90)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=6)
    ax.set_ylabel("time per part / epoch time\n(mean rank; streams overlap)")
    ax.set_xlabel("left bar: dgl-pull, right bar (hatched): p3; label: epoch time (s)")
    ax.set_ylim(0, plot.get("ymax", 1.6))
    ax.legend(loc="upper left", ncol=3, fontsize=6)
    plot = dict(plot, legend=False)
    finish(fig, ax, plot, stem)


@functools.lru_cache(maxsize=4)
def trace_events(trace_path, modified_ns):
    """A Chrome trace's events, read once per version of the file (modified_ns keys the cache):
    a figure's claims, their evidence and its plot read the same trace several times."""
    with open(trace_path) as f:
        document = json.load(f)
    return document["traceEvents"] if isinstance(document, dict) else document


def stream_intervals(trace_path, stream="compute"):
    """The busy intervals of a stream (or of any of a list of streams) in a Chrome trace of
    simulate, merged per rank: ({rank: [[start, stop], ...]}, ranks, end of the trace), seconds."""
    streams = [stream] if isinstance(stream, str) else list(stream)
    events = trace_events(trace_path, os.stat(trace_path).st_mtime_ns)
    by_rank = {}
    end = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        start, stop = e["ts"] * 1e-6, (e["ts"] + e.get("dur", 0)) * 1e-6
        end = max(end, stop)
        if e.get("tid") in streams:
            by_rank.setdefault(e["pid"], []).append((start, stop))
    merged = {}
    for rank, intervals in by_rank.items():
        intervals.sort()
        out = []
        for s, t in intervals:
            if out and s <= out[-1][1]:
                out[-1][1] = max(out[-1][1], t)
            else:
                out.append([s, t])
        merged[rank] = out
    ranks = sorted({e["pid"] for e in events if e.get("ph") == "X"})
    return merged, ranks, end


def covered_seconds(intervals, lo, hi):
    return sum(max(0.0, min(t, hi) - max(s, lo)) for s, t in intervals)


def busy_timeline(trace_path, stream="compute", window_seconds=None):
    """Busy fraction of a stream (compute: GPU kernels) in a Chrome trace of simulate: the exact
    share of the traced time, and per time window averaged over the ranks. stream may be a list
    (busy when any of them runs)."""
    merged, ranks, end = stream_intervals(trace_path, stream)
    if end <= 0 or not ranks:
        return {"busy_fraction": 0.0, "times": [], "fractions": [], "end": end}
    busy = sum(t - s for iv in merged.values() for s, t in iv)
    window = window_seconds or end / 100
    times, fractions = [], []
    w = 0.0
    while w < end:
        hi = min(end, w + window)
        covered = sum(covered_seconds(iv, w, hi) for iv in merged.values())
        times.append(w)
        fractions.append(covered / ((hi - w) * len(ranks)))
        w = hi
    return {"busy_fraction": busy / (end * len(ranks)), "times": times, "fractions": fractions,
            "end": end, "window": window}


def polled_utilisation(merged, ranks, end, poll_seconds, sample_period_seconds):
    """What a utilisation monitor polled every poll_seconds reads off a trace, as nvidia-smi does
    (NVML: the share of the last sample period, 1/6 s to 1 s by product, in which a kernel ran):
    [(poll time, [reading of every rank])], the first poll one period in, so that each reading
    sees a full one."""
    polls = []
    poll = sample_period_seconds
    while poll <= end + 1e-12:
        lo = poll - sample_period_seconds
        polls.append((poll, [covered_seconds(merged.get(rank, []), lo, poll) /
                             sample_period_seconds for rank in ranks]))
        poll += poll_seconds
    return polls


def polled_busy_fraction(trace_path, stream, poll_seconds, sample_period_seconds):
    """The share of a monitor's readings that are above zero (the GPU "busy" in the P3 paper's
    Fig. 12: at least one kernel ran in the reading's sample period), and the peak reading; with
    per poll the share of ranks read busy."""
    merged, ranks, end = stream_intervals(trace_path, stream)
    polls = polled_utilisation(merged, ranks, end, poll_seconds, sample_period_seconds)
    readings = [r for _, rank_readings in polls for r in rank_readings]
    if not readings:
        return None
    return {"busy_fraction": sum(1 for r in readings if r > 0) / len(readings),
            "peak": max(readings), "readings": len(readings),
            "times": [t for t, _ in polls],
            "busy_ranks": [sum(1 for r in rs if r > 0) / len(rs) for _, rs in polls]}


def timeline(figure, raw, stem):
    """Fig. 12: GPU busy fraction over the simulated timeline, one panel per strategy."""
    plot = figure["plot"]
    traced = [p for p in figure["points"] if p.get("trace")]
    fig, axes = style.figure(plot.get("width", 3.4), plot.get("height", 3.2),
                             nrows=len(traced), sharex=True, squeeze=False)
    horizon = max(busy_timeline(os.path.join(raw, p["trace"]))["end"] for p in traced)
    for ax, p in zip(axes[:, 0], traced):
        data = busy_timeline(os.path.join(raw, p["trace"]), plot.get("stream", "compute"),
                             horizon / 100)
        name = p["assignments"].get("distribution.strategy")
        ax.fill_between(data["times"], data["fractions"], step="post", color=colour(name),
                        alpha=0.8, linewidth=0, label="kernel time")
        title = (f"{name}: kernels {100 * data['busy_fraction']:.0f} % of "
                 f"{data['end']:.2f} s")
        monitor = plot.get("monitor")
        polled = monitor and polled_busy_fraction(
            os.path.join(raw, p["trace"]), plot.get("stream", "compute"),
            monitor["poll_seconds"], monitor["sample_period_seconds"])
        if polled:
            ax.step(polled["times"], polled["busy_ranks"], where="post", color="black",
                    linewidth=0.6, label="read busy by nvidia-smi")
            title += f", busy {100 * polled['busy_fraction']:.0f} % as nvidia-smi reads it"
        ax.set_ylim(0, 1.05)
        ax.set_xlim(0, horizon)
        ax.set_ylabel("share of GPUs")
        ax.set_title(title, fontsize=7)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if handles:
        # In the last panel, whose strategy usually ends first and leaves its right side empty.
        axes[-1, 0].legend(handles, labels, loc="upper right", fontsize=6)
    axes[-1, 0].set_xlabel(f"simulated time (s); kernel time in {horizon / 100 * 1e3:.3g} ms "
                           "windows")
    fig.tight_layout()
    style.save(fig, stem)


def heatmap(figure, raw, stem):
    """Beyond the paper: which strategy wins over two fields, and by how much (log2 of
    numerator / denominator time: > 0 means the denominator's strategy is faster)."""
    plot = figure["plot"]
    points = figure["points"]
    x_field, y_field = plot["x"], plot["y"]
    num, den = plot["numerator"], plot["denominator"]
    xs = sorted({as_number(p["assignments"][x_field]) for p in points})
    ys = sorted({as_number(p["assignments"][y_field]) for p in points})
    grid = [[math.nan] * len(xs) for _ in ys]

    def pick(select, x, y):
        for p in selected(points, select):
            if (as_number(p["assignments"][x_field]) == x and
                    as_number(p["assignments"][y_field]) == y):
                return p.get("epoch_seconds")
        return None

    for j, y in enumerate(ys):
        for i, x in enumerate(xs):
            a, b = pick(num, x, y), pick(den, x, y)
            if a and b:
                grid[j][i] = math.log2(a / b)
    finite = [abs(v) for row in grid for v in row if not math.isnan(v)]
    bound = max(finite + [1.0])
    fig, ax = style.figure(plot.get("width", 3.6), plot.get("height", 2.8))
    image = ax.imshow(grid, origin="lower", cmap="RdBu_r", aspect="auto",
                      norm=TwoSlopeNorm(vcenter=0, vmin=-bound, vmax=bound))
    for j in range(len(ys)):
        for i in range(len(xs)):
            v = grid[j][i]
            winner = plot.get("winner_labels", ["", ""])[0 if v > 0 else 1] if not math.isnan(v) else ""
            text = "—" if math.isnan(v) else f"{winner}\n{2 ** abs(v):.1f}×"
            ax.text(i, j, text, ha="center", va="center", fontsize=6,
                    color="white" if not math.isnan(v) and abs(v) > 0.6 * bound else "black")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([f"{x:g}" for x in xs])
    ax.set_yticks(range(len(ys)))
    ax.set_yticklabels([f"{y:g}" for y in ys])
    ax.set_xlabel(plot["xlabel"])
    ax.set_ylabel(plot["ylabel"])
    ax.grid(False)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(plot.get("colorbar", "log2(time ratio)"))
    ax.set_title(plot.get("title", ""))
    style.save(fig, stem)


def partitioning(figure, raw, stem):
    """Fig. 8: (a) epoch time per system and partitioner, (b) partitioning time,
    (c) partitioner memory (peak resident set of the partitioning process)."""
    plot = figure["plot"]
    fig, axes = style.figure(plot.get("width", 7.4), plot.get("height", 2.4), ncols=3)
    trained = [p for p in figure["points"] if p.get("epoch_seconds") is not None]
    labels = [f"{p['assignments'].get('distribution.strategy')}\n"
              f"{p['assignments'].get('distribution.partitioner')}" for p in trained]
    axes[0].bar(range(len(trained)), [p["epoch_seconds"] for p in trained],
                color=[colour(p["assignments"].get("distribution.strategy")) for p in trained])
    axes[0].set_xticks(range(len(trained)))
    axes[0].set_xticklabels(labels, fontsize=6)
    axes[0].set_ylabel("epoch time (s)")
    axes[0].set_title("(a) training, simulated")
    parts = [p for p in figure["points"] if p.get("partition_seconds") is not None]
    names = [p["assignments"]["distribution.partitioner"] for p in parts]
    axes[1].bar(range(len(parts)), [p["partition_seconds"] for p in parts], color="tab:gray")
    axes[1].set_xticks(range(len(parts)))
    axes[1].set_xticklabels(names)
    axes[1].set_ylabel("partitioning time (s)")
    axes[1].set_yscale("log")
    axes[1].set_title("(b) partitioning, measured")
    axes[2].bar(range(len(parts)), [p["peak_rss_bytes"] / 2**30 for p in parts],
                color="tab:gray")
    axes[2].set_xticks(range(len(parts)))
    axes[2].set_xticklabels(names)
    axes[2].set_ylabel("peak memory (GiB)")
    axes[2].set_title("(c) memory, measured")
    fig.tight_layout()
    style.save(fig, stem)


def real(figure, raw, stem):
    """Real runs (run_experiment, 2 ranks on this machine) beside simulate's prediction."""
    plot = figure["plot"]
    reals = [p for p in figure["points"] if p["source"] == "real"]
    fig, ax = style.figure(plot.get("width", 3.4), plot.get("height", 2.4))
    for i, p in enumerate(reals):
        twin = [q for q in figure["points"] if q["source"] == "simulated"
                and q["assignments"] == p["assignments"]]
        ax.bar(i - 0.2, p["epoch_seconds"], 0.4, color="tab:gray",
               label="real (run_experiment)" if i == 0 else None)
        if twin and twin[0].get("epoch_seconds") is not None:
            ax.bar(i + 0.2, twin[0]["epoch_seconds"], 0.4,
                   color=colour(p["assignments"]["distribution.strategy"]), hatch="//",
                   label="simulated (this-machine)" if i == 0 else None)
    ax.set_xticks(range(len(reals)))
    ax.set_xticklabels([p["assignments"]["distribution.strategy"] for p in reals])
    ax.set_ylabel("epoch time (s)")
    finish(fig, ax, plot, stem)


PLOT_KINDS = {"lines": lines, "grouped_bars": grouped_bars, "breakdown_bars": breakdown_bars,
              "timeline": timeline, "heatmap": heatmap, "partitioning": partitioning,
              "real": real}


def draw(figure, raw, stem):
    PLOT_KINDS[figure["plot"]["kind"]](figure, raw, stem)
