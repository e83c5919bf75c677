#!/usr/bin/env python3
"""Reruns the commands behind the tables of BENCHMARKS.md and rewrites the tables.

Each table sits between `<!-- table:AREA -->` and `<!-- end -->`. This script runs the
commands of the areas asked for, builds the table from their JSON (or criterion's bencher
lines, or the bootstrap example's report), stamps it with the CPU model, the command and
the date, and writes it back in place. Columns marked "(recorded)" hold figures of optional
peer builds (tfhe-ntt, tfhe-rs, SEAL, OpenFHE, Lattigo): they are carried over from the
existing table row by row, and the text under each table gives the command that refreshes
them.

    python3 ci/bench_report.py                      # every area (long: the TFHE and CKKS rows take minutes)
    python3 ci/bench_report.py --only kernels       # one area (repeatable)
    python3 ci/bench_report.py --dry-run            # print the commands, change nothing
    python3 ci/bench_report.py --triskel target/release/triskel --only bfv
    python3 ci/bench_report.py --only kernels --from-output kernels=saved.txt   # rewrite from saved output

Run from the repository root after `cargo build --release --bin triskel`. Timings from a
machine shared with other work measure that work too: run on an otherwise idle machine.
Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import math
import re
import shlex
import subprocess
import sys

# Workload clock and threads of every `triskel bench workloads` call: one thread, process
# CPU time (what the peer scripts compare).
WORKLOAD_ENV = {"TRISKEL_BENCH_CLOCK": "cpu", "RAYON_NUM_THREADS": "1"}

BFV_WORKLOADS = ["bfv.biometric_match", "bfv.biometric_match_private", "bfv.mul_relin",
                 "bfv.rotate", "ring.keyswitch_16384"]
CKKS_WORKLOADS = ["ckks.mul_pipeline", "ckks.rotate", "ckks.slot_sum64", "ckks.dot64",
                  "ckks.poly_x2", "ckks.dense_64x4", "ckks.mul_pipeline_16384",
                  "ckks.poly_deg7", "ckks.mlp_64_4_1", "ckks.mlp_64_4_1_square"]
TFHE_WORKLOADS = ["tfhe.gate_nand", "tfhe.pbs_2_2", "tfhe.uint8_gt", "tfhe.uint8_add",
                  "tfhe.uint64_add", "tfhe.uint64_mul"]
ROUTER_WORKLOADS = ["router.match_decision", "router.match_identify"]
KERNEL_SHAPES = [(4096, 50), (16384, 50), (65536, 50), (4096, 62), (16384, 62), (65536, 62)]
BOOTSTRAP_LOG_N = [12, 13, 14]
SPLIT_NAMES = {"match": "biometric match + threshold decision",
               "mlp": "CKKS network 64 -> 4 -> 1",
               "compare8": "TFHE 8-bit comparison"}

AREAS = ["kernels", "bfv", "ckks", "tfhe", "router", "client-server", "service", "ray",
         "attestation", "threshold", "bootstrapping", "scaling"]
# The Python package as ci/test.sh builds it (maturin develop --profile ci) with Ray.
VENV_PYTHON = "target/py-venv/bin/python"
SERVICE_WORKERS = [2, 1]


class Step:
    """One command of an area: argv, extra environment, and how its output is kept."""

    def __init__(self, argv, env=None, label=None):
        self.argv = argv
        self.env = env or {}
        self.label = label

    def shown(self):
        env = " ".join(f"{k}={v}" for k, v in sorted(self.env.items()))
        cmd = " ".join(shlex.quote(a) for a in self.argv)
        return f"{env} {cmd}".strip()


def workload_steps(triskel, names):
    return [Step([triskel, "bench", "workloads", "--only", n, "--json"], WORKLOAD_ENV, n)
            for n in names]


def steps_for(area, triskel):
    if area == "kernels":
        return [Step([triskel, "bench", "kernels", "--n", str(n), "--bits", str(b), "--json"],
                     label=f"{n}/{b}") for n, b in KERNEL_SHAPES]
    if area == "bfv":
        return workload_steps(triskel, BFV_WORKLOADS)
    if area == "ckks":
        return workload_steps(triskel, CKKS_WORKLOADS)
    if area == "tfhe":
        return workload_steps(triskel, TFHE_WORKLOADS)
    if area == "router":
        return workload_steps(triskel, ROUTER_WORKLOADS)
    if area == "client-server":
        return [Step([triskel, "bench", "split", "--rounds", "9", "--json"], label="split")]
    if area == "service":
        return [Step([triskel, "bench", "service", "--clients", "32", "--seconds", "60",
                      "--workers", str(w), "--json"], label=f"workers {w}")
                for w in SERVICE_WORKERS]
    if area == "ray":
        return [Step([VENV_PYTHON, "python/bench/ray_throughput.py", "--jobs", "160"],
                     label="ray")]
    if area == "scaling":
        return [Step([triskel, "bench", "scaling", "--threads", "2", "--rounds", "3", "--json"],
                     label="scaling")]
    if area == "attestation":
        return [Step(["cargo", "bench", "-p", "triskel-benches", "--bench", "attest", "--",
                      "--warm-up-time", "1", "--output-format", "bencher"], label="attest")]
    if area == "threshold":
        return workload_steps(triskel, ["bfv.threshold_3of5"]) + [
            Step(["cargo", "bench", "-p", "triskel-benches", "--bench", "threshold", "--",
                  "--output-format", "bencher"], {"RAYON_NUM_THREADS": "1"}, "criterion")]
    if area == "bootstrapping":
        build = Step(["cargo", "build", "--profile", "ci", "-p", "triskel-ckks", "--example",
                      "bootstrap"], label="build")
        runs = [Step(["target/ci/examples/bootstrap", str(n), "2"], {"RAYON_NUM_THREADS": "1"},
                     str(n)) for n in BOOTSTRAP_LOG_N]
        return [build] + runs
    raise SystemExit(f"unknown area {area!r}; known: {', '.join(AREAS)}")


def run(step):
    """Runs one step; returns (stdout, the command's peak resident set in KiB)."""
    env = dict(os.environ)
    env.update(step.env)
    proc = subprocess.Popen(step.argv, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    proc.stdout.close()
    # wait4 gives this child's own resource usage (its peak RSS), not every child's so far.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"bench_report: `{step.shown()}` exited with {proc.returncode}")
    return out, usage.ru_maxrss


# ---------------------------------------------------------------- formatting


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return os.uname().machine


def stamp(commands, note=""):
    date = datetime.date.today().isoformat()
    cpus = os.cpu_count() or 1
    lines = [f"Machine: {cpu_model()}, {cpus} CPUs. Date: {date}. Command: {commands}."]
    if note:
        lines.append(note)
    return "\n".join(lines)


def num(x, digits=3):
    """A figure with `digits` significant digits, thousands unseparated below 10^5."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def err(x):
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.1e}"


def size(b):
    return f"{b:,}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def old_rows(block, keys):
    """The rows of the table in an existing block, by the values of its first `keys` cells:
    {key tuple: {header: cell}}."""
    lines = [line for line in block.splitlines() if line.startswith("|")]
    if len(lines) < 2:
        return {}
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == len(header):
            rows[tuple(cells[:keys])] = dict(zip(header, cells))
    return rows


def carried(old, key, column):
    return old.get(key, {}).get(column, "–")


# ---------------------------------------------------------------- areas


def kernels_table(outputs, old, shown):
    header = ["N", "bits", "backend", "forward NTT (ns)", "inverse NTT (ns)",
              "ns per butterfly", "mul (ns)", "mul_acc (ns)", "forward vs portable",
              "tfhe-ntt forward (ns, recorded)", "tfhe-ntt inverse (ns, recorded)"]
    rows = []
    for out in outputs:
        r = json.loads(out)
        by = {}
        for res in r["results"]:
            by.setdefault(res["backend"], {})[res["op"]] = res
        portable = by.get("portable", {}).get("ntt_forward", {}).get("median_ns")
        for backend, ops in by.items():
            fwd = ops["ntt_forward"]["median_ns"]
            key = (str(r["n"]), str(r["bits"]), backend)
            rows.append(list(key) + [
                num(fwd), num(ops["ntt_inverse"]["median_ns"]),
                num(ops["ntt_forward"]["ns_per_butterfly"]),
                num(ops["mul"]["median_ns"]), num(ops["mul_acc"]["median_ns"]),
                f"{portable / fwd:.1f}x" if portable else "–",
                carried(old, key, header[9]), carried(old, key, header[10])])
    cmd = f"`{shown[0].replace('--n 4096 --bits 50', '--n N --bits B')}` for N in 4096, 16384, 65536 and B in 50, 62 (median of 31 samples)"
    return stamp(cmd), table(header, rows)


def workload_reports(outputs):
    return [json.loads(out)["workloads"][0] for out in outputs]


def stages(w, *names):
    m = w["median_us"]
    return [num(m.get(n)) for n in names]


def workloads_cmd():
    return ("`TRISKEL_BENCH_CLOCK=cpu RAYON_NUM_THREADS=1 triskel bench workloads --only NAME "
            "--json` for each workload below (process CPU time, one thread, medians in us)")


def bfv_table(outputs, old, shown):
    header = ["workload", "set", "encode", "encrypt", "compute", "decrypt", "total",
              "max error", "verified"]
    rows = []
    for w in workload_reports(outputs):
        rows.append([w["name"], w["params"]] + stages(w, "encode", "encrypt", "compute",
                                                        "decrypt", "total")
                    + [err(w["max_abs_error"]), "yes" if w["verified"] else "NO"])
    return stamp(workloads_cmd()), table(header, rows)


def ckks_table(outputs, old, shown):
    header = ["workload", "set", "encrypt", "compute", "decrypt", "max error", "verified",
              "SEAL / ours (recorded)", "Lattigo / ours (recorded)",
              "OpenFHE / ours (recorded)"]
    rows = []
    for w in workload_reports(outputs):
        key = (w["name"],)
        rows.append([w["name"], w["params"]] + stages(w, "encrypt", "compute", "decrypt")
                    + [err(w["max_abs_error"]), "yes" if w["verified"] else "NO"]
                    + [carried(old, key, h) for h in header[7:]])
    return stamp(workloads_cmd()), table(header, rows)


def tfhe_table(outputs, old, shown):
    header = ["workload", "set", "encrypt (ms)", "compute (ms)", "verified",
              "tfhe-rs 1.8.2 set (recorded)", "tfhe-rs (ms, recorded)",
              "triskel / tfhe-rs (recorded)"]
    rows = []
    for w in workload_reports(outputs):
        key = (w["name"],)
        m = w["median_us"]
        ms = lambda v: num(v / 1000 if v is not None else None)
        rows.append([w["name"], w["params"], ms(m.get("encrypt")), ms(m["compute"]),
                     "yes" if w["verified"] else "NO"]
                    + [carried(old, key, h) for h in header[5:]])
    cmd = workloads_cmd().replace("medians in us", "medians in ms")
    return stamp(cmd), table(header, rows)


def router_table(outputs, old, shown):
    header = ["workload", "sets", "compute (ms)", "baseline (ms)", "compute / baseline",
              "per decision (ms)", "verified"]
    rows = []
    for w in workload_reports(outputs):
        b = w.get("baseline") or {}
        rows.append([w["name"], w["params"], num(w["median_us"]["compute"] / 1000),
                     num(b["median_us"] / 1000) if b else "–",
                     f"{b['compute_ratio']:.2f}x" if b else "–",
                     num(b["per_decision_us"] / 1000) if b else "–",
                     "yes" if w["verified"] else "NO"])
    cmd = workloads_cmd().replace("medians in us", "medians in ms")
    return stamp(cmd), table(header, rows)


def split_table(outputs, old, shown):
    header = ["program", "Session compute (ms)", "Session decrypt (ms)", "server run (ms)",
              "of which signing (ms)", "split cost", "evaluation keys (B)", "inputs (B)",
              "outputs (B)", "keys write / read (MB/s)", "keys expansion (ms)",
              "inputs write / read (MB/s)",
              "outputs write / read (MB/s)", "peer key set (computed)"]
    rows = []
    r = json.loads(outputs[0])
    for p in r["programs"]:
        name = SPLIT_NAMES.get(p["name"], p["name"])
        ms = lambda us: num(us / 1000)
        rate = lambda a, b: f"{p[a]:.0f} / {p[b]:.0f}"
        rows.append([name, ms(p["session_compute_us"]), ms(p["session_decrypt_us"]),
                     ms(p["server_run_us"]), ms(p["signing_us"]),
                     f"{100 * p['overhead_low']:+.1f} % .. {100 * p['overhead_high']:+.1f} %",
                     size(p["key_bytes"]), size(p["input_bytes"]), size(p["output_bytes"]),
                     rate("keys_write_mb_s", "keys_read_mb_s"), ms(p["keys_expand_us"]),
                     rate("inputs_write_mb_s", "inputs_read_mb_s"),
                     rate("outputs_write_mb_s", "outputs_read_mb_s"),
                     carried(old, (name,), header[13])])
    return stamp(f"`{shown[0]}` (one thread, interleaved rounds, wall-clock medians)"), \
        table(header, rows)


def service_table(outputs, old, shown):
    header = ["workers", "jobs/s", "p50 latency", "p99 latency", "submitted", "completed",
              "failed", "lost", "evaluation per job",
              "service's own cost per job (workers + HTTP CPU)", "RSS after warm-up / at the end"]
    rows = []
    for out in outputs:
        r = json.loads(out)
        http = r["http_cpu_ms_per_job"]
        cost = "–" if http is None else \
            f"{r['worker_overhead_ms_per_job']:.1f} + {http:.1f} ms ({100 * r['overhead_ratio']:.1f} %)"
        rss = lambda k: "–" if r[k] is None else f"{r[k]:.1f}"
        rows.append([str(r["workers"]), f"{r['throughput_jobs_per_s']:.2f}",
                     f"{r['p50_ms'] / 1000:.1f} s", f"{r['p99_ms'] / 1000:.1f} s",
                     str(r["submitted"]), str(r["completed"]), str(r["failed"]), str(r["lost"]),
                     f"{r['evaluation_ms_per_job']:.0f} ms", cost,
                     f"{rss('rss_mib_after_warmup')} / {rss('rss_mib_end')} MiB"])
    cmd = (f"`{shown[0].replace('--workers 2', '--workers W')}` with W = "
           f"{', '.join(map(str, SERVICE_WORKERS))} (one process: `triskel serve` on 127.0.0.1 "
           "over a temporary store, and 32 clients that each keep one biometric match decision "
           "in flight, verify every record and check every decrypted result)")
    return stamp(cmd), table(header, rows)


def ray_table(outputs, old, shown):
    r = json.loads(outputs[0])
    one = r["results"][0]["jobs_per_second"]
    rows = []
    for x in r["results"]:
        rate = f"{x['jobs_per_second']:.1f}"
        if x["actors"] > 1:
            rate += f" ({x['jobs_per_second'] / one:.2f}x)"
        rows.append([str(x["actors"]), str(x["jobs"]), rate])
    cmd = (f"`{shown[0].replace(VENV_PYTHON, 'python')}` (the package built with `maturin develop "
           "--profile ci` into `target/py-venv`, as `ci/test.sh` does; a local Ray cluster of 2 "
           "CPUs; the match decision of one probe against one template; keys loaded into each "
           "actor before the clock starts)")
    note = (f"A job moves {size(r['inputs_bytes_per_job'])} B of encrypted inputs and "
            f"{size(r['outputs_bytes_per_job'])} B of outputs; the evaluation keys, "
            f"{size(r['keys_bytes'])} B, go once to each actor through the object store.")
    return stamp(cmd, note), table(["actors", "jobs", "jobs/s"], rows)


def scaling_table(outputs, old, shown):
    r = json.loads(outputs[0])
    header = ["workload", "1 thread (runs/s)", "2 copies (runs/s)", "scaling",
              "spread over 2: latency (us)", "of 1 thread's", "peak RSS per copy (MB)"]
    rows = []
    for w in r["workloads"]:
        t, lat = w["throughput"], w["spread_latency_us"]
        rss = w.get("peak_rss_mb")
        rows.append([f"`{w['name']}`", num(t["1"]), num(t["2"]), f"{w['scaling']['2']:.2f}x",
                     num(lat["2"]), f"{lat['2'] / lat['1']:.2f}x",
                     "–" if rss is None else num(rss)])
    return stamp(f"`{shown[0]}` ({r['rounds']} interleaved rounds, medians; wall clock)"), \
        table(header, rows)


BENCHER = re.compile(r"^test (\S+) \.\.\. bench:\s+([\d,]+) (ns|us|µs|ms|s)/iter")
UNIT_NS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def bencher(out):
    """criterion's `--output-format bencher` lines: {id: nanoseconds}."""
    found = {}
    for line in out.splitlines():
        m = BENCHER.match(line.strip())
        if m:
            found[m.group(1)] = float(m.group(2).replace(",", "")) * UNIT_NS[m.group(3)]
    return found


def dur(ns):
    if ns is None:
        return "–"
    if ns >= 1e9:
        return f"{ns / 1e9:.3g} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.3g} ns"


def attestation_table(outputs, old, shown):
    b = bencher(outputs[0])
    header = ["figure", "suite 2 (default)", "suite 1"]
    figures = [("one record: sign", "record/sign", 1),
               ("one record: verify", "record/verify", 1),
               ("batch of 1,024: sign, per result", "batch1024/sign", 1024),
               ("batch of 1,024: verify the root record and every proof, per result",
                "batch1024/verify_all", 1024),
               ("one inclusion proof, after the root is verified", "batch1024/check_one", 1)]
    rows = []
    for label, bench, per in figures:
        cells = []
        for suite in ("suite2", "suite1"):
            ns = b.get(f"attest/{suite}/{bench}")
            cells.append(dur(ns / per) if ns is not None else "–")
        rows.append([label] + cells)
    return stamp(f"`{shown[0]}` (criterion medians, 1 KiB results)"), table(header, rows)


def threshold_table(outputs, old, shown):
    w = json.loads(outputs[0])["workloads"][0]
    b = bencher(outputs[1])
    m = w["median_us"]
    dec = table(["decryption, 3 of 5 (" + w["params"] + ")", "partial (one party)",
                 "combine", "total"],
                [["`triskel bench workloads --only bfv.threshold_3of5` (process CPU time)",
                  num(m.get("partial")) + " us", num(m.get("combine")) + " us",
                  num(m["total"]) + " us"]]
                + [["criterion, CPU time of the measuring thread"]
                   + [dur(v) for v in (
                       next((v for k, v in b.items() if k.startswith("threshold/decrypt/")
                             and k.endswith("/" + part)), None)
                       for part in ("partial", "combine", "total"))]])
    header = ["protocol (bfv-n16384)", "3 parties", "5 parties", "10 parties",
              "bytes per party (recorded)", "Lattigo bytes (computed, recorded)"]
    rows = []
    for label, part in (("public key", "pk"), ("relinearization key (2 rounds)", "rlk"),
                        ("public-key switch", "pcks")):
        cells = []
        for parties in (3, 5, 10):
            ns = next((v for k, v in b.items() if k.startswith("threshold/keygen/")
                       and k.endswith(f"/{parties}/{part}")), None)
            cells.append(dur(ns))
        rows.append([label] + cells + [carried(old, (label,), h) for h in header[4:]])
    cmd = (f"`{shown[0]}` and `{shown[1]}` (criterion, CPU time of the measuring thread; the "
           "whole protocol, every party's share summed)")
    return stamp(cmd), dec + "\n\n" + table(header, rows)


BOOT_KEYS = re.compile(r"keygen ([\d.]+) s CPU; .*?([\d.]+) MiB serialized")
BOOT_REP = re.compile(r"bootstrap ([\d.]+) s CPU, .*max error ([\d.e+-]+) .*precision ([\d.]+) bits")


def bootstrapping_table(outputs, old, shown, rss=None):
    header = ["N", "slots", "bootstrap (s, CPU)", "keygen (s, CPU)", "keys (MiB, serialized)",
              "precision (bits, mean)", "max error", "peak RSS"]
    rows = []
    for i, (log_n, out) in enumerate(zip(BOOTSTRAP_LOG_N, outputs[1:])):
        keys = BOOT_KEYS.search(out)
        reps = BOOT_REP.findall(out)
        if not keys or not reps:
            raise SystemExit(f"bench_report: no bootstrap figures in the output for 2^{log_n}")
        secs = sorted(float(r[0]) for r in reps)
        precision = sorted(float(r[2]) for r in reps)
        worst = max(float(r[1]) for r in reps)
        span = lambda v, f: f.format(v[0]) if v[0] == v[-1] else (f + "-" + f).format(v[0], v[-1])
        peak = f"{rss[i + 1] / 1048576:.1f} GiB" if rss else "–"
        rows.append([f"2^{log_n}", str(2 ** (log_n - 1)), span(secs, "{:.2f}"),
                     keys.group(1), keys.group(2), span(precision, "{:.1f}"),
                     f"2^{math.log2(worst):.1f}", peak])
    cmd = (f"`{shown[0]}`, then `RAYON_NUM_THREADS=1 target/ci/examples/bootstrap LOG_N 2` for "
           f"LOG_N in {', '.join(map(str, BOOTSTRAP_LOG_N))} (the named set's chain and circuit "
           "at smaller, insecure degrees; one full-slot bootstrap of reals in [-1, 1], twice)")
    return stamp(cmd), table(header, rows)


TABLES = {"kernels": kernels_table, "bfv": bfv_table, "ckks": ckks_table, "tfhe": tfhe_table,
          "router": router_table, "client-server": split_table, "service": service_table,
          "ray": ray_table, "scaling": scaling_table,
          "attestation": attestation_table, "threshold": threshold_table,
          "bootstrapping": bootstrapping_table}
KEY_COLUMNS = {"kernels": 3, "threshold": 1}


# ---------------------------------------------------------------- the file


def block_span(text, area):
    start_marker = f"<!-- table:{area} -->"
    start = text.find(start_marker)
    if start < 0:
        raise SystemExit(f"bench_report: no `{start_marker}` in the file")
    body = start + len(start_marker)
    end = text.find("<!-- end -->", body)
    if end < 0:
        raise SystemExit(f"bench_report: `{start_marker}` has no `<!-- end -->`")
    return body, end


def rewrite(text, area, outputs, shown, rss):
    body, end = block_span(text, area)
    old = old_rows(text[body:end], KEY_COLUMNS.get(area, 1))
    if area == "threshold":
        # the second table of the block carries the recorded columns
        old = old_rows(text[body:end].split("\n\n")[-1], 1)
    make = TABLES[area]
    head, tab = make(outputs, old, shown, rss) if area == "bootstrapping" else \
        make(outputs, old, shown)
    return text[:body] + "\n" + head + "\n\n" + tab + "\n" + text[end:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triskel", default="target/release/triskel",
                    help="the triskel binary (default: target/release/triskel)")
    ap.add_argument("--only", action="append", choices=AREAS, metavar="AREA",
                    help=f"only this area (repeatable): {', '.join(AREAS)}")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--file", default="BENCHMARKS.md", help="the file to rewrite")
    ap.add_argument("--from-output", action="append", default=[], metavar="AREA=FILE",
                    help="take an area's outputs from FILE (one command's output per "
                         "section, sections separated by a line '---') instead of running")
    args = ap.parse_args()
    areas = args.only or AREAS
    saved = dict(a.split("=", 1) for a in args.from_output)

    if args.dry_run:
        for area in areas:
            print(f"# {area}")
            for step in steps_for(area, args.triskel):
                print(step.shown())
        return

    with open(args.file) as f:
        text = f.read()
    for area in areas:
        steps = steps_for(area, args.triskel)
        shown = [s.shown().replace(args.triskel, "triskel") for s in steps]
        if area in saved:
            with open(saved[area]) as f:
                outputs = f.read().split("\n---\n")
            rss = None
        else:
            if any(s.argv[0] == VENV_PYTHON for s in steps) and not os.path.exists(VENV_PYTHON):
                raise SystemExit(f"bench_report: no {VENV_PYTHON}: run ci/test.sh (or "
                                 "maturin develop into that virtualenv) first")
            if not os.path.exists(args.triskel) and any(s.argv[0] == args.triskel
                                                        for s in steps):
                raise SystemExit(f"bench_report: no {args.triskel}: run `cargo build "
                                 "--release --bin triskel` or give --triskel PATH")
            outputs, rss = [], []
            for step in steps:
                print(f"bench_report: {step.shown()}", file=sys.stderr)
                out, peak = run(step)
                outputs.append(out)
                rss.append(peak)
        text = rewrite(text, area, outputs, shown, rss)
        with open(args.file, "w") as f:
            f.write(text)
        print(f"bench_report: {area} rewritten in {args.file}", file=sys.stderr)


if __name__ == "__main__":
    main()
