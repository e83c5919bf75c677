"""Jobs per second of triskel.ray.map_encrypted on the biometric match
decision (1:1: a probe's score against one template decided within
2^TOLERANCE_BITS of the demo's threshold, the `router.match_decision`
workload's program), with 1 and 2 evaluator actors on a local Ray cluster
of 2 CPUs started here:

    python python/bench/ray_throughput.py [--jobs 32]

The pools are started (and the keys loaded into each actor) before the
clock starts, so the figures are the steady state of actors that keep
their keys. Prints one JSON object.
"""

import argparse
import json
import time

import ray

import triskel
import triskel.ray


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=32, help="jobs per measurement (default 32)")
    args = ap.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        probe, template = triskel._triskel._sample_embeddings(2, 7)
        (program,) = triskel.ray.identification_programs(
            [template],
            triskel.programs.THRESHOLD,
            triskel.programs.TOLERANCE_BITS,
            1,
            triskel._triskel._BIOMETRIC_MAX_FEATURE,
        )
        client = triskel.Client(program)
        identity = triskel.ServerIdentity.generate()
        keys = client.evaluation_keys()
        sent = [client.encrypt({"probe": probe}) for _ in range(args.jobs)]
        results = []
        for actors in (1, 2):
            with triskel.ray.EvaluatorPool(program, keys, actors=actors, identity=identity) as pool:
                list(pool.map(sent[:actors]))  # warm: every actor has run once
                start = time.perf_counter()
                outputs = list(pool.map(sent))
                seconds = time.perf_counter() - start
            assert all(client.decrypt(o, identity.public())["match"].shape == (1,) for o in outputs)
            results.append(
                {"actors": actors, "jobs": args.jobs, "seconds": seconds, "jobs_per_second": args.jobs / seconds}
            )
        ratio = results[1]["jobs_per_second"] / results[0]["jobs_per_second"]
        print(
            json.dumps(
                {
                    "program": "match_decision",
                    "keys_bytes": len(keys.to_bytes()),
                    "inputs_bytes_per_job": len(sent[0].to_bytes()),
                    "outputs_bytes_per_job": len(outputs[0].to_bytes()),
                    "results": results,
                    "speedup_2_over_1": ratio,
                }
            )
        )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
