"""triskel's CKKS workloads with OpenFHE and Microsoft SEAL, one thread.

Runs through the PyPI wheels `openfhe` (OpenFHE's C++ libraries) and `tenseal`, whose
`tenseal.sealapi` is SEAL's own low-level API (TenSEAL's CKKSVector is not used). Prints one
line per workload: "name wall_median_us cpu_median_us max_abs_error" for the compute stage
only (inputs encoded and encrypted outside the timed region, as in triskel's compute stage and
the Lattigo program in benches/peers/lattigo), median of RUNS runs after a warm-up, by wall
time and by process CPU time. Exits non-zero when a decrypted result is wrong.

The workloads run the algorithms triskel and the Lattigo program run: mul + relin + rescale,
one rotation, a tree of 6 rotations for the 64-slot sum, and the hybrid diagonal method for
the dense layer 64 -> 4 (4 extended diagonals, baby rotations 1, 2, 3, one rescale, a fold by
rotations 4, 8, 16, 32). Parameters: N = 8192 (16384 for ckks.mul_pipeline_16384),
Q {60, 40, 40} + P {60} (OpenFHE picks its own P: see OpenFhe), scale 2^40, one
key-switching digit per prime of Q. --builtin sums by OpenFHE's EvalSum instead of the tree;
--peer openfhe-q50 takes a 50-bit first prime, for which OpenFHE's P is one prime.

Usage: python ckks_peers.py --peer {openfhe,seal,openfhe-q50} [--only NAME,...] [--runs 10]
                            [--builtin] [--overhead]
"""

import argparse
import math
import statistics
import sys
import time

# A result farther than this from the float64 result is a wrong computation, not noise.
WRONG = 1e-3
FOLDS = [4, 8, 16, 32]
TREE = [1, 2, 4, 8, 16, 32]
BUILTIN = False


def inputs(seed, n):
    """The deterministic inputs in [-1, 1] of triskel's workloads."""
    return [math.modf((i + 1) * 0.6180339887 + seed * 0.4142135623)[0] * 2 - 1 for i in range(n)]


class OpenFhe:
    """OpenFHE 1.6: CKKS-RNS, FIXEDMANUAL rescaling, HYBRID key switching with 3 digits."""

    def __init__(self, log_n, steps, first_mod=60):
        import openfhe as o

        p = o.CCParamsCKKSRNS()
        p.SetRingDim(1 << log_n)
        p.SetBatchSize(1 << (log_n - 1))
        p.SetMultiplicativeDepth(2)
        p.SetFirstModSize(first_mod)
        p.SetScalingModSize(40)
        p.SetScalingTechnique(o.FIXEDMANUAL)
        p.SetKeySwitchTechnique(o.HYBRID)
        p.SetNumLargeDigits(3)
        # OpenFHE picks P itself: two 60-bit primes for a 60-bit digit (one for first_mod = 50),
        # so log QP = 260, above the 128-bit bound at N = 8192 (218): it refuses the chain
        # unless the check is off.
        p.SetSecurityLevel(o.HEStd_NotSet)
        cc = o.GenCryptoContext(p)
        for feature in (o.PKE, o.KEYSWITCH, o.LEVELEDSHE, o.ADVANCEDSHE):
            cc.Enable(feature)
        self.cc = cc
        self.slots = 1 << (log_n - 1)
        self.keys = cc.KeyGen()
        cc.EvalMultKeyGen(self.keys.secretKey)
        if steps:
            cc.EvalRotateKeyGen(self.keys.secretKey, steps)
        if BUILTIN:
            cc.EvalSumKeyGen(self.keys.secretKey)

    def encrypt(self, values):
        return self.cc.Encrypt(self.keys.publicKey, self.cc.MakeCKKSPackedPlaintext(values))

    def decrypt(self, ct):
        pt = self.cc.Decrypt(ct, self.keys.secretKey)
        pt.SetLength(self.slots)
        return pt.GetRealPackedValue()

    def mul_relin_rescale(self, a, b):
        return self.cc.Rescale(self.cc.EvalMult(a, b))

    def square_relin_rescale(self, a):
        return self.cc.Rescale(self.cc.EvalSquare(a))

    def rotate(self, ct, k):
        return self.cc.EvalRotate(ct, k)

    def add(self, a, b):
        return self.cc.EvalAdd(a, b)

    def builtin_sum(self, ct, n):
        return self.cc.EvalSum(ct, n)

    def rotate_hoisted(self, ct, steps):
        digits = self.cc.EvalFastRotationPrecompute(ct)
        m = 2 * self.cc.GetRingDimension()
        return [self.cc.EvalFastRotation(ct, k, m, digits) for k in steps]

    def encode_diagonal(self, values):
        # FIXEDMANUAL encodes at the level's scaling factor (about 2^40), not at q_l.
        return self.cc.MakeCKKSPackedPlaintext(values)

    def mul_plain(self, ct, pt):
        return self.cc.EvalMult(ct, pt)

    def rescale(self, ct):
        return self.cc.Rescale(ct)

    def no_op(self):
        return self.cc.GetRingDimension()


class Seal:
    """Microsoft SEAL through tenseal.sealapi: coeff modulus {60, 40, 40, 60}, the last prime
    being the special prime P (SEAL switches keys with one digit per prime of Q)."""

    def __init__(self, log_n, steps):
        import tenseal.sealapi as s

        self.s = s
        n = 1 << log_n
        parms = s.EncryptionParameters(s.SCHEME_TYPE.CKKS)
        parms.set_poly_modulus_degree(n)
        parms.set_coeff_modulus(s.CoeffModulus.Create(n, [60, 40, 40, 60]))
        self.ctx = s.SEALContext(parms, True, s.SEC_LEVEL_TYPE.TC128)
        self.top_q = parms.coeff_modulus()[-2].value()  # the last prime of Q
        self.scale = 2.0**40
        keygen = s.KeyGenerator(self.ctx)
        self.sk = keygen.secret_key()
        pk, self.rk, self.gk = s.PublicKey(), s.RelinKeys(), s.GaloisKeys()
        keygen.create_public_key(pk)
        keygen.create_relin_keys(self.rk)
        if steps:
            # This binding takes Galois elements: a left rotation by k is x -> x^(3^k).
            keygen.create_galois_keys([pow(3, k, 2 * n) for k in steps], self.gk)
        self.encoder = s.CKKSEncoder(self.ctx)
        self.encryptor = s.Encryptor(self.ctx, pk)
        self.decryptor = s.Decryptor(self.ctx, self.sk)
        self.ev = s.Evaluator(self.ctx)

    def new(self, op, *args):
        """Runs a SEAL operation that writes its result into a new ciphertext."""
        out = self.s.Ciphertext()
        op(*args, out)
        return out

    def encode(self, values, scale):
        pt = self.s.Plaintext()
        self.encoder.encode(values, scale, pt)
        return pt

    def encrypt(self, values):
        return self.new(self.encryptor.encrypt, self.encode(values, self.scale))

    def decrypt(self, ct):
        pt = self.s.Plaintext()
        self.decryptor.decrypt(ct, pt)
        return self.encoder.decode_double(pt)

    def relin_rescale(self, ct):
        self.ev.relinearize_inplace(ct, self.rk)
        self.ev.rescale_to_next_inplace(ct)
        return ct

    def mul_relin_rescale(self, a, b):
        return self.relin_rescale(self.new(self.ev.multiply, a, b))

    def square_relin_rescale(self, a):
        return self.relin_rescale(self.new(self.ev.square, a))

    def rotate(self, ct, k):
        return self.new(self.ev.rotate_vector, ct, k, self.gk)

    def add(self, a, b):
        return self.new(self.ev.add, a, b)

    def builtin_sum(self, ct, n):
        sys.exit("SEAL has no built-in slot sum")

    def rotate_hoisted(self, ct, steps):
        # SEAL has no hoisted rotations: one full key switch per step.
        return [self.rotate(ct, k) for k in steps]

    def encode_diagonal(self, values):
        # At scale q_l, as triskel and the Lattigo program: the rescale gives back 2^40 exactly.
        return self.encode(values, float(self.top_q))

    def mul_plain(self, ct, pt):
        return self.new(self.ev.multiply_plain, ct, pt)

    def rescale(self, ct):
        return self.new(self.ev.rescale_to_next, ct)

    def no_op(self):
        return self.encoder.slot_count()


PEERS = {
    "openfhe": OpenFhe,
    "seal": Seal,
    # The same Q shape with a 50-bit first prime, for which OpenFHE takes one 60-bit P prime.
    "openfhe-q50": lambda log_n, steps: OpenFhe(log_n, steps, first_mod=50),
}


def measure(name, peer, compute, want, runs):
    """Times `runs` calls of compute (after one warm-up), checks the last result."""
    compute()
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        out = compute()
        cpu.append((time.process_time() - c) * 1e6)
        wall.append((time.perf_counter() - w) * 1e6)
    got = peer.decrypt(out)
    err = max(abs(g - x) for g, x in zip(got, want))
    wall_us, cpu_us = statistics.median(wall), statistics.median(cpu)
    print(f"{name} {wall_us:.1f} {cpu_us:.1f} {err:.3g}", flush=True)
    if not err <= WRONG:
        sys.exit(f"{name}: max error {err:.3g} above {WRONG}: the computation is wrong")


def slot_sum(peer, acc):
    """The tree of 6 rotations, or the library's built-in sum (OpenFHE's EvalSum) with --builtin."""
    if BUILTIN:
        return peer.builtin_sum(acc, 64)
    for k in TREE:
        acc = peer.add(acc, peer.rotate(acc, k))
    return acc


def padded(values, slots):
    return values + [0.0] * (slots - len(values))


def mul_pipeline(name, log_n, runs, make):
    peer, slots = make(log_n, []), 1 << (log_n - 1)
    a, b = inputs(1, slots), inputs(2, slots)
    ca, cb = peer.encrypt(a), peer.encrypt(b)
    want = [x * y for x, y in zip(a, b)]
    measure(name, peer, lambda: peer.mul_relin_rescale(ca, cb), want, runs)


def poly_x2(runs, make):
    peer, slots = make(13, []), 4096
    a = inputs(3, slots)
    ca = peer.encrypt(a)
    measure("ckks.poly_x2", peer, lambda: peer.square_relin_rescale(ca), [x * x for x in a], runs)


def rotate(runs, make):
    peer, slots = make(13, [1]), 4096
    a = inputs(4, slots)
    ca = peer.encrypt(a)
    want = [a[(i + 1) % slots] for i in range(slots)]
    measure("ckks.rotate", peer, lambda: peer.rotate(ca, 1), want, runs)


def slot_sum64(runs, make):
    peer = make(13, TREE)
    a = inputs(5, 64)
    ca = peer.encrypt(padded(a, 4096))
    measure("ckks.slot_sum64", peer, lambda: slot_sum(peer, ca), [sum(a)], runs)


def dot64(runs, make):
    peer = make(13, TREE)
    a, b = inputs(6, 64), inputs(7, 64)
    ca, cb = peer.encrypt(padded(a, 4096)), peer.encrypt(padded(b, 4096))
    want = [sum(x * y for x, y in zip(a, b))]
    measure("ckks.dot64", peer, lambda: slot_sum(peer, peer.mul_relin_rescale(ca, cb)), want, runs)


def dense_64x4(runs, make):
    dim, rows, slots = 64, 4, 4096
    peer = make(13, [1, 2, 3] + FOLDS)
    w = [[0.5 * v for v in inputs(100 + r, dim)] for r in range(rows)]
    x = inputs(9, dim)
    want = [sum(w[r][c] * x[c] for c in range(dim)) for r in range(rows)]
    # Extended diagonal i holds w[s % rows][(s + i) % dim] in slot s; x is packed periodically.
    diags = [peer.encode_diagonal([w[s % rows][(s % dim + i) % dim] for s in range(slots)])
             for i in range(rows)]
    cx = peer.encrypt([x[s % dim] for s in range(slots)])

    def compute():
        rotated = [cx] + peer.rotate_hoisted(cx, [1, 2, 3])
        acc = peer.mul_plain(cx, diags[0])
        for i in range(1, rows):
            acc = peer.add(acc, peer.mul_plain(rotated[i], diags[i]))
        acc = peer.rescale(acc)
        for k in FOLDS:
            acc = peer.add(acc, peer.rotate(acc, k))
        return acc

    measure("ckks.dense_64x4", peer, compute, want, runs)


WORKLOADS = {
    "ckks.mul_pipeline": lambda r, m: mul_pipeline("ckks.mul_pipeline", 13, r, m),
    "ckks.rotate": rotate,
    "ckks.slot_sum64": slot_sum64,
    "ckks.dot64": dot64,
    "ckks.poly_x2": poly_x2,
    "ckks.dense_64x4": dense_64x4,
    "ckks.mul_pipeline_16384": lambda r, m: mul_pipeline("ckks.mul_pipeline_16384", 14, r, m),
}


def overhead(make):
    """Median time of a Python call into the library that does nothing (us)."""
    peer = make(13, [])
    times = []
    for _ in range(20):
        t = time.perf_counter()
        for _ in range(10000):
            peer.no_op()
        times.append((time.perf_counter() - t) / 10000 * 1e6)
    print(f"no-op call {statistics.median(times):.3f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", choices=PEERS, required=True)
    ap.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per workload")
    ap.add_argument("--overhead", action="store_true", help="time a no-op library call")
    ap.add_argument("--builtin", action="store_true", help="sums by the library's own EvalSum")
    args = ap.parse_args()
    global BUILTIN
    BUILTIN = args.builtin
    make = PEERS[args.peer]
    if args.overhead:
        return overhead(make)
    names = args.only.split(",") if args.only else list(WORKLOADS)
    for name in names:
        if name not in WORKLOADS:
            sys.exit(f"unknown workload {name}")
        WORKLOADS[name](args.runs, make)


if __name__ == "__main__":
    main()
