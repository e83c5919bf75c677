"""The biometric match demo on a Ray cluster, as a Ray job:

    ray job submit --working-dir python/examples -- python ray_match.py --probes 64 --actors 4

The key holder's part (keys, encryption, verification, decryption) runs in
the job's driver; the evaluation runs in `--actors` evaluator actors, each
loading the evaluation keys once from the object store. Prints one line per
probe and the throughput. The cluster's Python environment needs the
`triskel` wheel and numpy (see the cluster config in python/README.md).
"""

import argparse
import time

import numpy as np
import ray

import triskel
import triskel.ray


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", type=int, default=16, help="probes to match (default 16)")
    ap.add_argument("--actors", type=int, default=2, help="evaluator actors (default 2)")
    ap.add_argument("--check", action="store_true", help="compare each answer with run_local")
    args = ap.parse_args(argv)

    if not ray.is_initialized():
        ray.init()  # the cluster of the job (RAY_ADDRESS), or a local one
    program = triskel.programs.load("match")
    base = triskel.programs.example_inputs("match")["probe"]
    rng = np.random.default_rng(0)
    bound = triskel._triskel._BIOMETRIC_MAX_FEATURE
    probes = [np.clip(base + rng.integers(-2, 3, size=base.shape), -bound, bound) for _ in range(args.probes)]

    client = triskel.Client(program)  # the key holder: secret keys stay in the driver
    identity = triskel.ServerIdentity.generate()  # the evaluators' signing identity
    sent = [client.encrypt({"probe": p}) for p in probes]
    start = time.perf_counter()
    outputs = triskel.ray.map_encrypted(
        program, client.evaluation_keys(), sent, actors=args.actors, identity=identity
    )
    seconds = time.perf_counter() - start
    for i, out in enumerate(outputs):
        plain = client.decrypt(out, identity.public())  # records verified first
        expected = triskel.run_local(program, {"probe": probes[i]}) if args.check else None
        if expected is not None and expected["match"].tolist() != plain["match"].tolist():
            raise SystemExit(f"probe {i}: the cluster's answer differs from run_local")
        print(f"probe {i}: match={bool(plain['match'][0])}")
    print(f"{len(outputs)} jobs on {args.actors} actors in {seconds:.1f} s: {len(outputs) / seconds:.2f} jobs/s")


if __name__ == "__main__":
    main()
