"""Judges advise against measured runs (validate_advise.sh): per setting, advise's ranking
(settings/SETTING/advise.json) beside every candidate's measured epoch (runs.tsv, the median epoch
after the warm-up of each run), and whether advise's first choice is the measured fastest or
within the tolerance of it. Writes advise_validation.csv (a row per candidate) and
advise_validation.json (a verdict per setting, with provenance), and prints the verdicts."""
import argparse
import csv
import json
import os
import platform
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validation_table import git, median_epoch  # noqa: E402  (a sibling script)


def verdict(ranked, measured_seconds, tolerance, near_ties=None):
    """One setting's verdict. `ranked`: advise's candidates, its first choice first (each with
    name and epoch_seconds); `measured_seconds`: name -> measured epoch (absent where the run
    failed); `near_ties`: the candidates advise named as predicted within its tie tolerance of
    the first, where it names them. Advise is right when its first choice ran and took at most
    (1 + tolerance) times the measured fastest."""
    if not ranked:
        return {"right": False, "why": "advise ranked no candidate"}
    first = ranked[0]["name"]
    ran = {name: s for name, s in measured_seconds.items() if s is not None}
    missing = [c["name"] for c in ranked if c["name"] not in ran]
    if first not in ran:
        return {"advised": first, "right": False, "missing": missing,
                "why": f"advise's first choice, {first}, has no measurement"}
    fastest = min(ran, key=lambda name: (ran[name], name))
    excess = ran[first] / ran[fastest] - 1
    measured_order = sorted(ran, key=lambda name: (ran[name], name))
    return {
        "advised": first, "advised_predicted_seconds": ranked[0]["epoch_seconds"],
        "advised_measured_seconds": ran[first], "measured_fastest": fastest,
        "measured_fastest_seconds": ran[fastest], "advised_over_fastest": excess,
        "advised_measured_rank": measured_order.index(first) + 1,
        "candidates_measured": len(ran), "missing": missing,
        "right": excess <= tolerance,
        "fastest_named": None if near_ties is None else fastest in [first, *near_ties],
    }


def read_setting(output, setting, runs):
    """advise's ranking and the measured epoch of each candidate run at one setting."""
    with open(os.path.join(output, "settings", setting, "advise.json"), encoding="utf-8") as f:
        document = json.load(f)
    measured = {}
    for entry in runs:
        seconds = None
        if entry["exit_code"] == "0":
            with open(os.path.join(output, entry["result"]), encoding="utf-8") as f:
                seconds = median_epoch(json.load(f))["seconds"]
        measured[entry["candidate"]] = seconds
    return document["ranked"], measured, document.get("near_ties")


def candidate_rows(setting, entry, ranked, measured):
    predicted = {c["name"]: (i + 1, c["epoch_seconds"]) for i, c in enumerate(ranked)}
    rows = []
    for name, seconds in measured.items():
        rank, prediction = predicted.get(name, (None, None))
        rows.append({"setting": setting, "rate_gbps": entry["rate_gbps"], "ranks": entry["ranks"],
                     "hidden": entry["hidden"], "feature_width": entry["feature_width"],
                     "candidate": name, "advise_rank": rank, "predicted_epoch_seconds": prediction,
                     "measured_epoch_seconds": seconds})
    return rows


def write_csv(f, rows):
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)


def write_atomically(path, write):
    with open(path + ".tmp", "w", newline="", encoding="utf-8") as f:
        write(f)
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", required=True, help="validate_advise's directory")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--command", default="", help="the validation command line")
    parser.add_argument("--calibration", default="", help="advise's calibration file")
    args = parser.parse_args()
    with open(os.path.join(args.output, "runs.tsv"), encoding="utf-8") as manifest:
        entries = list(csv.DictReader(manifest, delimiter="\t"))
    settings = list(dict.fromkeys(e["setting"] for e in entries))
    verdicts, rows = [], []
    for setting in settings:
        runs = [e for e in entries if e["setting"] == setting]
        ranked, measured, ties = read_setting(args.output, setting, runs)
        verdicts.append({"setting": setting, **verdict(ranked, measured, args.tolerance, ties)})
        rows += candidate_rows(setting, runs[0], ranked, measured)
    write_atomically(os.path.join(args.output, "advise_validation.csv"),
                     lambda f: write_csv(f, rows))
    right = sum(v["right"] for v in verdicts)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    document = {
        "provenance": {"command": args.command, "git_revision": git(root, "rev-parse", "HEAD"),
                       "host": platform.node(), "cpus": os.cpu_count(),
                       "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       "calibration": args.calibration, "tolerance": args.tolerance},
        "settings": verdicts, "right": right, "total": len(verdicts)}
    write_atomically(os.path.join(args.output, "advise_validation.json"),
                     lambda f: json.dump(document, f, indent=1))
    print_verdicts(verdicts, args.tolerance)
    print(f"table: {args.output}/advise_validation.csv, {args.output}/advise_validation.json")
    return 0


def print_verdicts(verdicts, tolerance):
    print(f"{'setting':<22} {'advise first':<34} {'meas s':>7} {'fastest measured':<34} "
          f"{'meas s':>7} {'excess':>7} {'rank':>5}")
    for v in verdicts:
        if "measured_fastest" not in v:
            print(f"{v['setting']:<22} {v['why']}")
            continue
        print(f"{v['setting']:<22} {v['advised']:<34} {v['advised_measured_seconds']:>7.3f} "
              f"{v['measured_fastest']:<34} {v['measured_fastest_seconds']:>7.3f} "
              f"{v['advised_over_fastest']:>+7.1%} {v['advised_measured_rank']:>5}"
              f"{'' if v['right'] else '  <- not within ' + format(tolerance, '.0%')}")
    right = sum(v["right"] for v in verdicts)
    print(f"advise's first choice is the measured fastest or within {tolerance:.0%} of it in "
          f"{right} of {len(verdicts)} settings")
    named = [v for v in verdicts if v.get("fastest_named") is not None]
    if named:
        print(f"the measured fastest is advise's first or one of the near ties it named in "
              f"{sum(v['fastest_named'] for v in named)} of {len(named)}")


if __name__ == "__main__":
    sys.exit(main())
