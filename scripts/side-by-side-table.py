#!/usr/bin/env python3
"""Markdown tables from the log of scripts/bench-side-by-side.sh: per share of
the file, each system's measured tokens/s round by round (sparseflash's
predictions in brackets) with sparseflash's ratio to llama.cpp in the same
round (the default build unlimited, the plain one under a limit); then the
prediction errors (predicted / measured - 1) and their median and max, and,
where the runs rechecked the compute rates or the storage (--recheck-compute,
--recheck-storage), the errors of the predictions at the rates measured
around each run.

  scripts/side-by-side-table.py side-by-side.tsv
"""
import csv
import statistics
import sys
from collections import defaultdict


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):  # no figure: a failed run, an older log
        return None


def fmt(values):
    return ", ".join("-" if v is None else f"{v:.3g}" for v in values)


def print_errors(title, table):
    """One row per share and configuration: each run's error, median and max."""
    if not any(table.values()):
        return
    print(f"\n| memory | configuration | {title} | median abs. | max abs. |")
    print("|---|---|---|---|---|")
    for (share, config), e in table.items():
        if e:
            a = [abs(x) for x in e]
            print(f"| {share} | {config} | {', '.join(f'{x:+.1%}' for x in e)} | "
                  f"{statistics.median(a):.1%} | {max(a):.1%} |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
    shares = list(dict.fromkeys(r["share"] for r in rows))
    runs = defaultdict(dict)  # (share, system, configuration) -> round -> (measured, predicted)
    now = defaultdict(list)  # (share, configuration) -> errors at the rechecked rates
    for r in rows:
        key = (r["share"], r["system"], r["configuration"])
        measured = number(r["measured"])
        runs[key][r["round"]] = (measured, number(r["predicted"]))
        predicted_now = number(r.get("predicted_now"))
        if measured and predicted_now:
            now[(r["share"], r["configuration"])].append(predicted_now / measured - 1)

    print("| memory | system | measured tok/s (predicted) | ratio to llama.cpp |")
    print("|---|---|---|---|")
    errors = defaultdict(list)  # (share, configuration) -> errors
    for share in shares:
        reference = "default" if share == "none" else "plain"
        base = runs.get((share, "llama.cpp", reference), {})
        for (s, system, config), by_round in runs.items():
            if s != share:
                continue
            measured = [m for m, _ in by_round.values()]
            cell = fmt(measured)
            ratio = ""
            if system == "sparseflash":
                cell += f" ({fmt(p for _, p in by_round.values())})"
                ratios = [m / base[k][0] for k, (m, _) in by_round.items()
                          if m and k in base and base[k][0]]
                if ratios:
                    ratio = f"{min(ratios):.1f}-{max(ratios):.1f}x"
                errors[(share, config)] += [p / m - 1 for m, p in by_round.values() if m and p]
            label = "unlimited" if share == "none" else f"{float(share):.0%} of the file"
            print(f"| {label} | {system} {config} | {cell} | {ratio} |")

    for title, table in (("prediction errors", errors),
                         ("errors at the rates checked around each run", now)):
        print_errors(title, table)
    groups = {
        "powerinfer2 and llmflash at 50 and 75 %": lambda s, c: s in ("0.5", "0.75")
        and not c.startswith("llamacpp"),
        "llamacpp at every limit": lambda s, c: c.startswith("llamacpp"),
    }
    print()
    for name, member in groups.items():
        for table, at in ((errors, ""), (now, " at the rechecked rates")):
            a = [abs(x) for (s, c), e in table.items() if member(s, c) for x in e]
            if a:
                count = f"{len(a)} run" + ("s" if len(a) != 1 else "")
                print(f"- {name}{at}: {count}, median abs. error {statistics.median(a):.1%}, "
                      f"max {max(a):.1%}")


if __name__ == "__main__":
    main()
