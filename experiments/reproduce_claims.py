"""The claims of experiments/reproduce: a paper value against ours, computed from a figure's
points, and the measured quantities (evidence) that explain a disagreement.

A claim's metric and each piece of its evidence are the same kind of object (see
experiments/figures/README.md): a ratio of two selected points, a ratio of ratios, a crossover, a
single point's value, or a busy fraction read off a simulated timeline. A claim's `why` names its
evidence as {name}, so the explanation printed in the report quotes the numbers of this run, not
the numbers of the run it was written from."""
import math
import os
import string
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "plots"))
import reproduce_figures  # noqa: E402  (after the path is set)

METRIC_KINDS = ("ratio", "ratio_of_ratios", "crossover", "value", "busy_fraction")
UNITS = ("s", "bytes", "fraction", "x", "")


class SpecError(Exception):
    """A figure spec that cannot be used; the message names the file and field."""


def text_value(value):
    """How simulate prints an assignment's value (and how selectors compare them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(text_value(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def matches(point, selector):
    """A selector maps run, an assignment or a label to a value, or to {"any": [values]}."""
    for field, value in selector.items():
        if field == "quantity":
            continue
        have = point["run"] if field == "run" else point["assignments"].get(field)
        wanted = value["any"] if isinstance(value, dict) and "any" in value else [value]
        if have not in [text_value(v) for v in wanted]:
            return False
    return True


def quantity(point, selector, default):
    name = selector.get("quantity", default)
    if name.startswith("breakdown."):
        return point.get("breakdown_mean_seconds", {}).get(name.split(".", 1)[1])
    if name.startswith("bytes_sent."):
        return point.get("mean_bytes_sent_by_kind", {}).get(name.split(".", 1)[1])
    return point.get(name)


def pair_key(point, selectors, pair_on=None):
    """Points pair up when they agree on every field no selector names (or on pair_on)."""
    if pair_on is not None:
        return tuple((k, point["assignments"].get(k)) for k in pair_on)
    fixed = set()
    for selector in selectors:
        fixed |= set(selector)
    return tuple(sorted((k, v) for k, v in point["assignments"].items() if k not in fixed))


def ratios(points, metric):
    """(ratio, numerator point, denominator point) for every matched pair."""
    numerator, denominator = metric["numerator"], metric["denominator"]
    default = metric.get("quantity", "epoch_seconds")
    pair_on = metric.get("pair_on")
    tops = [p for p in points if matches(p, numerator)]
    bottoms = {}
    for p in points:
        if matches(p, denominator):
            bottoms.setdefault(pair_key(p, (numerator, denominator), pair_on), p)
    pairs = []
    for top in tops:
        bottom = bottoms.get(pair_key(top, (numerator, denominator), pair_on))
        if bottom is None:
            continue
        a, b = quantity(top, numerator, default), quantity(bottom, denominator, default)
        if a is None or b is None or b == 0:
            continue
        pairs.append((a / b, top, bottom))
    return pairs


def describe(point):
    parts = [f"{k.split('.')[-1]}={v}" for k, v in sorted(point["assignments"].items())]
    return f"{point['run']}: " + " ".join(parts)


def reduced(candidates, reduce, describe_one):
    """One (value, where) out of (value, where-object) candidates: only, mean, min or max."""
    if reduce == "only" and len(candidates) != 1:
        return None, f"expected one, found {len(candidates)}"
    if reduce == "mean":
        return sum(v for v, _ in candidates) / len(candidates), f"mean over {len(candidates)}"
    chosen = {"only": candidates[0], "max": max(candidates, key=lambda t: t[0]),
              "min": min(candidates, key=lambda t: t[0])}[reduce]
    return chosen[0], describe_one(chosen[1])


def evaluate_ratio(metric, points):
    pairs = ratios(points, metric)
    if not pairs:
        return None, "no matching pair of points (out of memory, or not run in this mode)"
    return reduced([(r, (top, bottom)) for r, top, bottom in pairs], metric.get("reduce", "only"),
                   lambda pair: f"{describe(pair[0])} / {describe(pair[1])}")


def evaluate_value(metric, points):
    selected = [(quantity(p, metric, "epoch_seconds"), p) for p in points
                if matches(p, metric.get("select", {}))]
    selected = [(v, p) for v, p in selected if v is not None]
    if not selected:
        return None, "no matching point with this quantity"
    return reduced(selected, metric.get("reduce", "only"), describe)


def evaluate_crossover(metric, points):
    field = metric["x"]
    series = sorted(((float(top["assignments"][field]), r)
                     for r, top, _ in ratios(points, metric)))
    if not series:
        return None, "no matching pair of points"
    if series[0][1] >= 1:
        return series[0][0], f"already >= 1 at the smallest {field} ({series[0][0]:g})"
    for (x0, r0), (x1, r1) in zip(series, series[1:]):
        if r0 < 1 <= r1:
            # Interpolate in log x and log ratio between the two points around the crossing.
            t = (0 - math.log(r0)) / (math.log(r1) - math.log(r0))
            x = math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0)))
            return x, f"between {field} {x0:g} (ratio {r0:.2f}) and {x1:g} ({r1:.2f})"
    return None, f"no crossing up to {field} {series[-1][0]:g} (ratio {series[-1][1]:.2f})"


def evaluate_busy_fraction(metric, points, figure_dir):
    """The share of the traced time a stream runs, or with "monitor" the share of a polling
    monitor's readings above zero (nvidia-smi's, as the P3 paper measured Fig. 12)."""
    selected = [p for p in points if matches(p, metric["select"]) and p.get("trace")]
    if not selected:
        return None, "no trace for the selected run"
    trace = os.path.join(figure_dir, "raw", selected[0]["trace"])
    stream = metric.get("stream", "compute")
    streams = stream if isinstance(stream, str) else " or ".join(stream)
    monitor = metric.get("monitor")
    if monitor is None:
        return (reproduce_figures.busy_timeline(trace, stream)["busy_fraction"],
                f"{describe(selected[0])}, {streams} stream busy over the simulated timeline")
    polled = reproduce_figures.polled_busy_fraction(trace, stream, monitor["poll_seconds"],
                                                    monitor["sample_period_seconds"])
    if polled is None:
        return None, "the trace is shorter than one sample period of the monitor"
    return polled["busy_fraction"], (
        f"{describe(selected[0])}, {streams} stream: {polled['readings']} readings polled every "
        f"{monitor['poll_seconds'] * 1e3:g} ms, each over the last "
        f"{monitor['sample_period_seconds'] * 1e3:.0f} ms")


def evaluate(metric, points, figure_dir):
    """Ours for one metric: (value, where) or (None, why there is none)."""
    kind = metric.get("kind", "ratio")
    if kind == "ratio":
        return evaluate_ratio(metric, points)
    if kind == "ratio_of_ratios":
        first, where_first = evaluate_ratio(metric["first"], points)
        second, where_second = evaluate_ratio(metric["second"], points)
        if first is None or second is None:
            return None, where_first if first is None else where_second
        return first / second, f"({where_first}) over ({where_second})"
    if kind == "crossover":
        return evaluate_crossover(metric, points)
    if kind == "value":
        return evaluate_value(metric, points)
    if kind == "busy_fraction":
        return evaluate_busy_fraction(metric, points, figure_dir)
    raise SpecError(f"metric kind '{kind}' is not one of {', '.join(METRIC_KINDS)}")


def judge(claim, ours):
    """Whether ours agrees with the paper, and the line the report prints when it does not."""
    paper = claim["paper"]
    expect = claim.get("expect")
    if expect:
        holds = {">": ours > expect["value"], "<": ours < expect["value"],
                 ">=": ours >= expect["value"], "<=": ours <= expect["value"]}[expect["op"]]
        return holds, None if holds else (f"the paper's claim ({expect['op']} {expect['value']:g}) "
                                          f"does not hold here: ours is {ours:.3g}")
    tolerance = claim.get("tolerance", 1.5)
    ratio = ours / paper if paper else math.inf
    agrees = 1 / tolerance <= ratio <= tolerance
    if agrees:
        return True, None
    direction = "higher" if ratio > 1 else "lower"
    return False, f"ours is {ratio:.2f}x the paper's ({direction}; tolerance {tolerance:g}x)"


# ---------------------------------------------------------------------------------------------
# Evidence: the measured quantities a claim's explanation quotes


REQUIRED = {"ratio": ("numerator", "denominator"), "ratio_of_ratios": ("first", "second"),
            "crossover": ("numerator", "denominator", "x"), "value": ("select",),
            "busy_fraction": ("select",)}


def check_metric(where, metric):
    """A metric's kind and the fields that kind needs; SpecError names the field."""
    kind = metric.get("kind", "ratio")
    if kind not in REQUIRED:
        raise SpecError(f"{where}: kind '{kind}' is not one of {', '.join(METRIC_KINDS)}")
    for field in REQUIRED[kind]:
        if field not in metric:
            raise SpecError(f"{where}: a {kind} metric needs '{field}'")
    if metric.get("reduce", "only") not in ("only", "min", "max", "mean"):
        raise SpecError(f"{where}: reduce '{metric['reduce']}' is not only, min, max or mean")
    if kind == "ratio_of_ratios":
        check_metric(f"{where}.first", dict(metric["first"], kind="ratio"))
        check_metric(f"{where}.second", dict(metric["second"], kind="ratio"))
    for field in ("poll_seconds", "sample_period_seconds"):
        if "monitor" in metric and not metric["monitor"].get(field, 0) > 0:
            raise SpecError(f"{where}: monitor.{field} must be a number of seconds above zero")


def check_claim(where, claim):
    """A claim's fields, its evidence and the names its `why` quotes; SpecError names the field."""
    for field in ("claim", "cite", "paper", "metric"):
        if field not in claim:
            raise SpecError(f"{where}: missing field '{field}'")
    check_metric(f"{where}: metric", claim["metric"])
    names = set()
    for index, item in enumerate(claim.get("evidence", [])):
        for field in ("name", "label", "metric"):
            if field not in item:
                raise SpecError(f"{where}: evidence[{index}]: missing field '{field}'")
        if not item["name"].isidentifier() or item["name"] in names:
            raise SpecError(f"{where}: evidence[{index}]: name '{item['name']}' must be an "
                            "identifier used once")
        if item.get("unit", "") not in UNITS:
            raise SpecError(f"{where}: evidence[{index}]: unit '{item['unit']}' is not one of "
                            f"{', '.join(repr(u) for u in UNITS)}")
        check_metric(f"{where}: evidence[{index}].metric", item["metric"])
        names.add(item["name"])
    try:
        quoted = {field for _, field, _, _ in string.Formatter().parse(claim.get("why", ""))
                  if field is not None}
    except ValueError as error:
        raise SpecError(f"{where}: why: {error}") from None
    unknown = quoted - names
    if unknown:
        raise SpecError(f"{where}: why quotes {', '.join(sorted(unknown))}, which no evidence "
                        f"names (evidence: {', '.join(sorted(names)) or 'none'})")


def with_unit(value, unit):
    if value is None:
        return "no value"
    if unit == "s":
        return f"{value:.3g} s"
    if unit == "bytes":
        for scale, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value:.0f} B"
    if unit == "fraction":
        return f"{100 * value:.2g} %" if abs(value) < 0.1 else f"{100 * value:.0f} %"
    if unit == "x":
        return f"{value:.2f}x" if abs(value) < 10 else f"{value:.3g}x"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def measure_evidence(claim, points, figure_dir):
    """Every evidence item of a claim with its value (None where the run gave none) and where."""
    measured = []
    for item in claim.get("evidence", []):
        value, where = evaluate(item["metric"], points, figure_dir)
        measured.append({"name": item["name"], "label": item["label"],
                         "unit": item.get("unit", ""), "value": value, "where": where,
                         "text": with_unit(value, item.get("unit", ""))})
    return measured


def explanation(claim, measured):
    """The claim's `why` with every quoted name replaced by its measured value and unit."""
    return claim.get("why", "").format_map({m["name"]: m["text"] for m in measured})
