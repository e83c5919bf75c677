"""The boolean NAND gate of OpenFHE's BinFHE (the peer of `tfhe.gate_nand`), one thread.

For each parameter set (STD128 with GINX, i.e. CGGI blind rotation; STD128_LMKCDEY with
LMKCDEY, OpenFHE's fastest 128-bit boolean set), prints "tfhe.gate_nand/SET/METHOD
wall_median_us cpu_median_us wrong_gates": one EvalBinGate(NAND) per run (bootstrapping
included, as triskel's gate), inputs encrypted outside the timed region, median of RUNS runs
after a warm-up. Exits non-zero when a decrypted gate is wrong.

Usage: OMP_NUM_THREADS=1 python binfhe_nand.py [--runs 10]
"""

import argparse
import statistics
import sys
import time

import openfhe as o

SETS = [(o.STD128, o.GINX, "STD128/GINX"), (o.STD128_LMKCDEY, o.LMKCDEY, "STD128_LMKCDEY/LMKCDEY")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="timed gates per set")
    runs = ap.parse_args().runs
    failed = False
    for paramset, method, label in SETS:
        cc = o.BinFHEContext()
        cc.GenerateBinFHEContext(paramset, method)
        sk = cc.KeyGen()
        cc.BTKeyGen(sk)
        wall, cpu, wrong = [], [], 0
        for run in range(runs + 1):
            a, b = run & 1, (run >> 1) & 1
            ca, cb = cc.Encrypt(sk, a), cc.Encrypt(sk, b)
            w, c = time.perf_counter(), time.process_time()
            out = cc.EvalBinGate(o.NAND, ca, cb)
            c, w = time.process_time() - c, time.perf_counter() - w
            if run > 0:  # run 0 is the warm-up
                cpu.append(c * 1e6)
                wall.append(w * 1e6)
            wrong += cc.Decrypt(sk, out) != 1 - (a & b)
        wall_us, cpu_us = statistics.median(wall), statistics.median(cpu)
        print(f"tfhe.gate_nand/{label} {wall_us:.1f} {cpu_us:.1f} {wrong}", flush=True)
        failed |= wrong > 0
    if failed:
        sys.exit("a decrypted NAND gate is wrong")


if __name__ == "__main__":
    main()
