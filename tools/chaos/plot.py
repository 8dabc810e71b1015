#!/usr/bin/env python3
"""Plot a soak: tools/chaos/plot.py <soak dir> <out.png>.

Reads samples.csv and events.json written by `chaos soak` and draws, over
the soak's minutes, the daemon's resident memory, goroutines, open file
descriptors and its connections to the NameNode and the metastore, with a
line at every fault (grey) and every SIGKILL of the daemon (red). A new
daemon process after a SIGKILL starts a new segment of each curve.
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = [
    ("rss_mb", "resident memory (MiB)"),
    ("goroutines", "goroutines"),
    ("fds", "open file descriptors"),
    (("namenode_established", "namenode_other", "hms_established", "hms_other"), "connections"),
]


def load(d):
    with open(os.path.join(d, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    events = []
    p = os.path.join(d, "events.json")
    if os.path.exists(p):
        with open(p) as f:
            events = json.load(f) or []
    return rows, events


def by_pid(rows):
    out = {}
    for r in rows:
        out.setdefault(r["pid"], []).append(r)
    return out


def main(d, png):
    rows, events = load(d)
    procs = by_pid(rows)
    fig, axes = plt.subplots(len(PANELS), 1, figsize=(10, 9), sharex=True)
    for ax, (cols, title) in zip(axes, PANELS):
        cols = cols if isinstance(cols, tuple) else (cols,)
        for col in cols:
            first = True
            for pid, rs in procs.items():
                x = [float(r["elapsed_s"]) / 60 for r in rs]
                y = [float(r[col]) for r in rs]
                ax.plot(x, y, linewidth=1, color=color(col), label=col if first and len(cols) > 1 else None)
                first = False
        for e in events:
            ax.axvline(e["at_seconds"] / 60, color="red" if e["kind"] == "kill" else "0.8", linewidth=0.6, zorder=0)
        ax.set_ylabel(title, fontsize=8)
        ax.set_ylim(bottom=0)
        if len(cols) > 1:
            ax.set_ylim(0, ax.get_ylim()[1] * 1.6)  # room for the legend above the lines
            ax.legend(fontsize=7, loc="upper left", ncol=4)
    axes[-1].set_xlabel("minutes (grey: a service fault, red: SIGKILL of hdfs-sink)")
    fig.suptitle("hdfs-sink soak: %d samples, %d daemon processes" % (len(rows), len(procs)), fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=80)


def color(col):
    return {"namenode_established": "C0", "namenode_other": "C1", "hms_established": "C2", "hms_other": "C3"}.get(col, "C0")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
