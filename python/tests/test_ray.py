"""triskel.ray on a local Ray cluster (2 CPUs, loopback only) that this
module starts and stops: map_encrypted in order against run_local, an actor
killed mid-run, library errors, and identification over 1024 templates on
2 shard actors against the one-process answer."""

import os
import runpy

import numpy as np
import pytest

import triskel
from triskel import Kind, Program

try:
    import ray
except ImportError as e:
    # ci/test.sh sets this only when `pip install ray` itself failed.
    reason = os.environ.get("TRISKEL_RAY_INSTALL_FAILED")
    if not reason:
        raise ImportError(f"Ray is not installed (pip install ray): {e}") from e
    pytest.skip(f"Ray could not be installed: {reason}", allow_module_level=True)

import triskel.ray as tray


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        configure_logging=False,
        log_to_driver=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def identity():
    return triskel.ServerIdentity.generate()


def affine_program():
    p = Program()
    x = p.input("x", Kind.signed(4, 1000))
    p.output("y", p.add_scalar(p.mul_scalar(x, 3), 7))
    p.output("s", p.dot_plain(x, [1, -2, 3, 4]))
    return p


def batch(n):
    return [np.array([i, -i, 2 * i, 1000 - i], dtype=np.int64) for i in range(n)]


def check(client, identity, xs, outputs):
    assert len(outputs) == len(xs)
    for x, out in zip(xs, outputs):
        plain = client.decrypt(out, identity.public())
        np.testing.assert_array_equal(plain["y"], 3 * x + 7)
        np.testing.assert_array_equal(plain["s"], [x @ np.array([1, -2, 3, 4])])


def test_map_encrypted_in_order_equals_run_local(identity):
    p = affine_program()
    client = triskel.Client(p)
    xs = batch(6)
    outputs = tray.map_encrypted(
        p, client.evaluation_keys(), (client.encrypt({"x": x}) for x in xs), actors=2, identity=identity
    )
    check(client, identity, xs, outputs)
    local = triskel.run_local(p, {"x": xs[3]})
    np.testing.assert_array_equal(client.decrypt(outputs[3], identity.public())["y"], local["y"])
    assert tray.map_encrypted(p, client.evaluation_keys(), [], actors=1, identity=identity) == []


def test_backpressure_reads_inputs_as_jobs_finish(identity):
    p = affine_program()
    client = triskel.Client(p)
    read = []

    def inputs():
        for i, x in enumerate(batch(6)):
            read.append(i)
            yield client.encrypt({"x": x})

    with tray.EvaluatorPool(p, client.evaluation_keys(), actors=1, identity=identity) as pool:
        it = pool.map(inputs(), max_in_flight=2)
        next(it)
        assert len(read) <= 3  # two outstanding, and at most one more once the first is out
        assert len(list(it)) == 5
    assert read == list(range(6))


def test_killing_an_actor_mid_run_gives_every_result_once(identity):
    p = affine_program()
    client = triskel.Client(p)
    xs = batch(10)
    sent = [client.encrypt({"x": x}) for x in xs]
    with tray.EvaluatorPool(p, client.evaluation_keys(), actors=2, identity=identity) as pool:
        victim = pool.actors[0]
        outputs = []
        for out in pool.map(sent, max_in_flight=6):
            if not outputs:
                ray.kill(victim)  # its queued and running jobs (up to 3) die with it
            outputs.append(out)
        assert victim not in pool.actors and len(pool.actors) == 2
        assert pool.reruns >= 1  # the victim's jobs ran again elsewhere
        check(client, identity, xs, outputs)
        # Every record binds the inputs of its own job: nothing swapped.
        for s, out in zip(sent, outputs):
            triskel.remote.verify(client, s, out, identity.public())
        # The replacement serves the next map.
        check(client, identity, xs[:2], list(pool.map(sent[:2])))


def test_a_job_is_never_dropped(identity):
    p = affine_program()
    client = triskel.Client(p)
    sent = [client.encrypt({"x": x}) for x in batch(4)]
    with tray.EvaluatorPool(p, client.evaluation_keys(), actors=1, identity=identity, retries=0) as pool:
        it = pool.map(sent)
        next(it)
        ray.kill(pool.actors[0])
        with pytest.raises(tray.RayEvaluationError, match="died"):
            list(it)


def test_library_errors_keep_their_class(identity):
    p = affine_program()
    client, other = triskel.Client(p), triskel.Client(p)
    with tray.EvaluatorPool(p, client.evaluation_keys(), actors=1, identity=identity) as pool:
        with pytest.raises(triskel.RefusedError, match="another key set"):
            list(pool.map([other.encrypt({"x": batch(1)[0]})]))
        with pytest.raises(triskel.InputError, match="EncryptedInputs expected"):
            list(pool.map([b"bytes"]))
    with pytest.raises(triskel.InputError):
        tray.EvaluatorPool(p, client.evaluation_keys(), actors=0, identity=identity)


def test_identification_over_1024_templates_on_2_actors(identity):
    rng = np.random.default_rng(35)
    dim, bound, n = 128, 127, 1024
    templates = bound * rng.choice([-1, 1], size=(n, dim))
    # A template scores dim * bound^2 (~2.06M) against itself and about
    # +-sqrt(dim) * bound^2 (~182 000) against an unrelated vector; scores
    # within 2^18 of the threshold may be decided either way.
    threshold, tol = 1_200_000, 18
    near = templates[700].copy()
    near[:8] = -near[:8]  # a noisy copy: 1.81M
    far = bound * rng.choice([-1, 1], size=dim)
    for probe, want in ((near, True), (far, False)):
        scores = templates @ probe
        assert abs(scores.max() - threshold) > 1 << tol
        assert (scores.max() >= threshold) == want
    with tray.Identification(templates, threshold, tol, shards=2, identity=identity, feature_bound=bound) as ident:
        assert [len(p.inputs()) for p in ident.programs] == [1, 1] and len(ident.pools) == 2
        assert ident.identify(near) is True
        assert ident.identify(far) is False
    # The one-process answer of the whole database, as one program.
    (whole,) = tray.identification_programs(templates, threshold, tol, 1, bound)
    assert triskel.run_local(whole, {"probe": near})["match"].tolist() == [True]


def test_the_ray_job_example_runs(capsys):
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "ray_match.py")
    main = runpy.run_path(example)["main"]
    main(["--probes", "2", "--actors", "2", "--check"])
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out[:2]] == ["probe 0", "probe 1"]
    assert out[2].startswith("2 jobs on 2 actors")
