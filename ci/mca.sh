#!/usr/bin/env bash
# Static cycle estimates of the AArch64 kernels with llvm-mca 19 (Debian's
# LLVM 19) for Neoverse N1 (Graviton2), V1 (Graviton3) and V2 (Graviton4):
# cycles per butterfly of the forward and inverse NTT's main stages, per
# element of mul, mul_acc and the automorphisms, and per term (one product
# per output element) of dot and the exact base_convert, for each AArch64
# backend and for the portable C compiled by clang 19 with the same -mcpu.
#
# How: each kernel is assembled (aarch64-linux-gnu-gcc) or compiled (clang-19
# -O3 -fno-unroll-loops -fno-vectorize, so one element per iteration),
# disassembled with llvm-objdump-19, and one innermost loop of the function
# (listed below: function, which innermost loop, work per iteration) is fed
# to llvm-mca-19 for 1000 iterations: cycles per iteration / work.
# Limits: llvm-mca models the core's pipelines and latencies from LLVM's
# scheduling model only: no caches, no memory latency, no branch
# mispredictions, no loop overhead outside the measured loop (the NTT's other
# stages, the neon backend's pack/unpack passes). SVE loops assume the
# hardware vector length: 256 bits on V1, 128 on V2; N1 has no SVE.
# "bits/cycle" counts modulus bits: 62 for 64-bit lanes (61 for the rows of
# primes below 2^61), 31 for neon.
# Installs llvm-19, clang-19 and gcc-aarch64-linux-gnu (Debian/Ubuntu) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
missing=()
command -v llvm-mca-19 >/dev/null || missing+=(llvm-19)
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v "$CROSS_CC" >/dev/null || missing+=(gcc-aarch64-linux-gnu)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    echo "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for src in kernels-asm/aarch64/*.S; do
    "$CROSS_CC" -c -Ikernels-asm/aarch64 "$src" -o "$work/$(basename "$src" .S).o"
done
for cpu in neoverse-n1 neoverse-v1 neoverse-v2; do
    clang-19 --target=aarch64-linux-gnu -mcpu="$cpu" -O3 -fno-unroll-loops -fno-vectorize \
        -ffreestanding -Ikernels-c/include -Ikernels-c/src -c kernels-c/src/portable.c \
        -o "$work/portable-$cpu.o"
done
for obj in "$work"/*.o; do
    llvm-objdump-19 -d --no-show-raw-insn --mattr=+sve "$obj" >"${obj%.o}.dis"
done

WORK=$work python3 - <<'EOF'
import os, re, subprocess

work = os.environ["WORK"]
# backend, object, kernel, function, innermost loop (1-based, address order,
# or "umulh": the first one with a umulh), work per iteration ("VL": one
# butterfly or element per 64-bit SVE lane; "VL+2": the NTT stages' vector of
# butterflies or products plus the two scalar ones interleaved with it),
# modulus bits.
LOOPS = [
    ("portable", "portable-{cpu}", "ntt_forward", "portable_ntt_forward", "umulh", 1, 62),
    ("portable", "portable-{cpu}", "ntt_inverse", "portable_ntt_inverse", "umulh", 1, 62),
    ("portable", "portable-{cpu}", "mul", "portable_mul", 1, 1, 62),
    ("portable", "portable-{cpu}", "mul_acc", "portable_mul_acc", 1, 1, 62),
    ("aarch64", "ntt", "ntt_forward", "triskel_aarch64_ntt_forward", 1, 2, 62),
    ("aarch64", "ntt", "ntt_inverse", "triskel_aarch64_ntt_inverse", 2, 2, 62),
    # mul and mul_acc have a loop for primes below 2^61 and one for 62-bit
    # primes (mulmod.S): aarch64's pair loops 1 and 2, sve's main loops 1 and 3.
    ("aarch64", "mulmod", "mul", "triskel_aarch64_mul", 2, 2, 62),
    ("aarch64", "mulmod", "mul_acc", "triskel_aarch64_mul_acc", 2, 2, 62),
    ("aarch64", "mulmod", "mul, q < 2^61", "triskel_aarch64_mul", 1, 2, 61),
    ("aarch64", "mulmod", "mul_acc, q < 2^61", "triskel_aarch64_mul_acc", 1, 2, 61),
    ("sve", "sve", "ntt_forward", "triskel_sve_ntt_forward", 1, "VL+2", 62),
    ("sve", "sve", "ntt_inverse", "triskel_sve_ntt_inverse", 2, "VL+2", 62),
    ("sve", "sve", "mul", "triskel_sve_mul", 3, "VL+2", 62),
    ("sve", "sve", "mul_acc", "triskel_sve_mul_acc", 3, "VL+2", 62),
    ("sve", "sve", "mul, q < 2^61", "triskel_sve_mul", 1, "VL+2", 61),
    ("sve", "sve", "mul_acc, q < 2^61", "triskel_sve_mul_acc", 1, "VL+2", 61),
    # neon's NTT stages interleave scalar butterflies on N1 only (neon.S):
    # there the mixed loop (4 + 2 butterflies), elsewhere the vector loop.
    ("neon", "neon", "ntt_forward", "triskel_neon_ntt_forward", {"N1": 2, "*": 3}, {"N1": 6, "*": 4}, 31),
    ("neon", "neon", "ntt_inverse", "triskel_neon_ntt_inverse", {"N1": 4, "*": 5}, {"N1": 6, "*": 4}, 31),
    # neon's products interleave scalar ones on N1 only (neon.S): there the
    # mixed loop (8 + 4 products), elsewhere the vector loop of 8.
    ("neon", "neon", "mul", "triskel_neon_mul", {"N1": 1, "*": 2}, {"N1": 12, "*": 8}, 31),
    ("neon", "neon", "mul_acc", "triskel_neon_mul_acc", {"N1": 1, "*": 2}, {"N1": 12, "*": 8}, 31),
    # The key-switching ops: the loop over terms of dot and of the exact
    # base_convert (one product, and for base_convert one double term, per
    # output element), the automorphisms' loop over elements. neon's table
    # uses the aarch64 kernels for these.
    ("portable", "portable-{cpu}", "dot", "portable_dot", "umulh", 1, 62),
    ("portable", "portable-{cpu}", "automorphism_coeff", "portable_automorphism_coeff", 1, 1, 62),
    ("portable", "portable-{cpu}", "automorphism_ntt", "portable_automorphism_ntt", 1, 1, 62),
    ("aarch64", "keyswitch", "dot", "triskel_aarch64_dot", 1, 1, 62),
    ("aarch64", "keyswitch", "base_convert", "triskel_aarch64_base_convert", 1, 1, 62),
    ("aarch64", "keyswitch", "automorphism_coeff", "triskel_aarch64_automorphism_coeff", 1, 1, 62),
    ("aarch64", "keyswitch", "automorphism_ntt", "triskel_aarch64_automorphism_ntt", 1, 2, 62),
    ("sve", "sve", "dot", "triskel_sve_dot", 1, "VL", 62),
    ("sve", "sve", "base_convert", "triskel_sve_base_convert", 1, "VL", 62),
    ("sve", "sve", "automorphism_coeff", "triskel_sve_automorphism_coeff", 1, "VL", 62),
    ("sve", "sve", "automorphism_ntt", "triskel_sve_automorphism_ntt", 1, "VL", 62),
]
CPUS = [("neoverse-n1", "N1", None), ("neoverse-v1", "V1", 4), ("neoverse-v2", "V2", 2)]
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S.*?)\s*(//.*)?$")


def function(dis, name):
    """(address, instruction text) of one function in a disassembly."""
    out, inside = [], False
    for line in open(dis):
        if line.strip().endswith(f"<{name}>:"):
            inside = True
            continue
        if inside:
            m = LINE.match(line)
            if not m:
                if out:
                    break
                continue
            out.append((int(m.group(1), 16), m.group(2).replace("\t", " ")))
    return out


def innermost_loops(code):
    """Bodies (lists of instructions) of the loops with no loop inside, in
    address order; a loop is a backward branch within the function."""
    loops = []
    for i, (addr, ins) in enumerate(code):
        m = re.match(r"(b\.\w+|cbn?z|tbn?z|b)\s+(?:.*,\s*)?0x([0-9a-f]+)", ins)
        if m and int(m.group(2), 16) < addr:
            start = next(j for j, (a, _) in enumerate(code) if a == int(m.group(2), 16))
            loops.append((start, i))
    inner = [l for l in loops if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]
    result = []
    for start, end in sorted(inner):
        # llvm-mca follows no branch: every target (the back edge, and exits
        # such as dot's every-16-terms reduction) becomes the loop label.
        body = [re.sub(r"0x[0-9a-f]+\s*<[^>]*>", ".Lloop", ins) for _, ins in code[start:end + 1]]
        result.append(body)
    return result


def cycles(body, cpu):
    text = ".Lloop:\n" + "\n".join(body) + "\n"
    run = subprocess.run(
        ["llvm-mca-19", "-mtriple=aarch64", f"-mcpu={cpu}", "-iterations=1000"],
        input=text, capture_output=True, text=True, check=True)
    total = int(re.search(r"Total Cycles:\s+(\d+)", run.stdout).group(1))
    return total / 1000


rows = {}
for backend, obj, kernel, func, which, per_iter_of, bits in LOOPS:
    for cpu, short, sve_lanes in CPUS:
        if backend == "sve" and sve_lanes is None:
            continue
        loops = innermost_loops(function(f"{work}/{obj.format(cpu=cpu)}.dis", func))
        pick = which.get(short, which.get("*")) if isinstance(which, dict) else which
        per_iter = per_iter_of.get(short, per_iter_of.get("*")) if isinstance(per_iter_of, dict) else per_iter_of
        if pick == "umulh":
            body = next(l for l in loops if any(i.startswith("umulh") for i in l))
        else:
            body = loops[pick - 1]
        work_per_iter = {"VL": sve_lanes, "VL+2": (sve_lanes or 0) + 2}.get(per_iter, per_iter)
        c = cycles(body, cpu) / work_per_iter
        rows.setdefault((backend, kernel), {})[short] = (c, bits / c, len(body))

unit = {"ntt_forward": "butterfly", "ntt_inverse": "butterfly", "dot": "term",
        "base_convert": "term, exact"}
print("llvm-mca 19 static estimates (cycles per butterfly / per element; modulus bits per cycle)")
print("| backend | kernel | N1 cycles | V1 cycles | V2 cycles | N1 bits/cycle | V1 bits/cycle | V2 bits/cycle | loop instructions (first CPU) |")
print("|---|---|---|---|---|---|---|---|---|")
for (backend, kernel), per_cpu in rows.items():
    cyc = [f"{per_cpu[c][0]:.2f}" if c in per_cpu else "-" for c in ("N1", "V1", "V2")]
    bpc = [f"{per_cpu[c][1]:.1f}" if c in per_cpu else "-" for c in ("N1", "V1", "V2")]
    n_ins = next(iter(per_cpu.values()))[2]
    print(f"| {backend} | {kernel} (per {unit.get(kernel, 'element')}) | " + " | ".join(cyc + bpc) + f" | {n_ins} |")
EOF
