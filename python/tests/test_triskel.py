"""The triskel package end to end: programs, one-process runs, the client and
server split through bytes, numpy in and out, and the errors of bad input."""

import json
import os
import subprocess

import numpy as np
import pytest

import triskel
from triskel import Kind, Program


def dot_program():
    p = Program()
    x = p.input("x", Kind.signed(4, 100))
    p.output("s", p.dot_plain(x, [1, -2, 3, 4]))
    return p


def split_run(program, inputs, **options):
    """Client -> server -> client, every object through its bytes."""
    client = triskel.Client(program, **options)
    keys = triskel.EvaluationKeys.from_bytes(client.evaluation_keys().to_bytes())
    sent = triskel.EncryptedInputs.from_bytes(client.encrypt(inputs).to_bytes())
    identity = triskel.ServerIdentity.from_bytes(triskel.ServerIdentity.generate().to_bytes())
    server = triskel.Server(identity)
    program = Program.from_bytes(program.to_bytes())
    outputs = triskel.EncryptedOutputs.from_bytes(server.run(program, keys, sent).to_bytes())
    public = triskel.PublicIdentity.from_bytes(identity.public().to_bytes())
    return client, outputs, public, client.decrypt(outputs, public)


def test_readme_example():
    # The example of python/README.md.
    p = triskel.Program()
    x = p.input("x", triskel.Kind.signed(4, bound=100))
    p.output("s", p.dot_plain(x, [1, -2, 3, 4]))
    client = triskel.Client(p)
    server = triskel.Server(triskel.ServerIdentity.generate())
    encrypted = client.encrypt({"x": np.array([10, 20, 30, 40])})
    outputs = server.run(p, client.evaluation_keys(), encrypted)
    plain = client.decrypt(outputs, server.public())
    assert plain["s"].tolist() == [220]
    assert triskel.run_local(p, {"x": [10, 20, 30, 40]})["s"].tolist() == [220]


def test_integers_reals_and_bits_against_numpy():
    p = Program()
    x = p.input("x", Kind.signed(4, 100))
    y = p.input("y", Kind.signed(4, 100))
    r = p.input("r", Kind.real(4))
    p.output("sum", p.add(x, y))
    p.output("dot", p.dot(x, y))
    p.output("poly", p.polynomial(r, [0.5, 0.0, 2.0]))
    z = p.input("z", Kind.uint(4, 8))
    p.output("big", p.compare_scalar(z, ">", 15))
    xs = np.array([10, 20, -30, 40], dtype=np.int64)
    ys = np.array([-1, 2, 3, 100], dtype=np.int64)
    rs = np.array([0.5, -0.5, 0.25, 1.0])
    inputs = {"x": xs, "y": ys, "r": rs, "z": np.abs(xs)}
    for out in (triskel.run_local(p, inputs), split_run(p, inputs)[3]):
        assert list(out) == ["sum", "dot", "poly", "big"]  # the program's output order
        assert out["sum"].dtype == np.int64
        np.testing.assert_array_equal(out["sum"], xs + ys)
        np.testing.assert_array_equal(out["dot"], [xs @ ys])
        assert out["poly"].dtype == np.float64
        np.testing.assert_allclose(out["poly"], 2 * rs**2 + 0.5, atol=1e-4)
        assert out["big"].dtype == np.bool_
        np.testing.assert_array_equal(out["big"], np.abs(xs) > 15)


def test_tfhe_comparison_and_lookup():
    p = Program()
    a = p.input("a", Kind.uint(2, 8))
    b = p.input("b", Kind.uint(2, 8))
    p.output("gt", p.compare(a, ">", b))
    p.output("sq", p.lookup(a, [(i * i) % 256 for i in range(256)]))
    out = split_run(p, {"a": [200, 3], "b": np.array([13, 9], dtype=np.uint8)})[3]
    np.testing.assert_array_equal(out["gt"], [True, False])
    np.testing.assert_array_equal(out["sq"], [(200 * 200) % 256, 9])


def test_demo_programs_run_and_match_the_plaintext():
    assert triskel.programs.names() == ["match", "mlp", "compare8"]
    out = triskel.run_local(triskel.programs.load("compare8"), triskel.programs.example_inputs("compare8"))
    np.testing.assert_array_equal(out["a>b"], [True])
    p = triskel.programs.load("match")
    probe = triskel.programs.example_inputs("match")["probe"]
    out = split_run(p, {"probe": probe})[3]
    templates = np.array(triskel._triskel._sample_embeddings(triskel.programs.TEMPLATES + 1, 7)[1:])
    scores = templates @ probe
    if abs(scores.max() - triskel.programs.THRESHOLD) > 1 << triskel.programs.TOLERANCE_BITS:
        np.testing.assert_array_equal(out["match"], [scores.max() >= triskel.programs.THRESHOLD])
    with pytest.raises(triskel.InputError, match="no demo program"):
        triskel.programs.load("nope")


@pytest.mark.skipif(not os.environ.get("TRISKEL_BIN"), reason="TRISKEL_BIN (the triskel program) not set")
def test_demo_programs_are_the_cli_programs(tmp_path):
    for name in triskel.programs.names():
        out = tmp_path / f"{name}.prog"
        subprocess.run([os.environ["TRISKEL_BIN"], "program", "write", name, "--out", str(out)], check=True)
        assert out.read_bytes() == triskel.programs.load(name).to_bytes(), name
        subprocess.run(
            [os.environ["TRISKEL_BIN"], "program", "inputs", name, "--out", str(tmp_path / "in.json")], check=True
        )
        want = json.loads((tmp_path / "in.json").read_text())
        got = triskel.programs.example_inputs(name)
        assert sorted(want) == sorted(got)
        for k, v in want.items():
            np.testing.assert_array_equal(got[k], np.array(v, dtype=got[k].dtype))


def test_program_bytes_and_explain():
    p = dot_program()
    again = Program.from_bytes(p.to_bytes())
    assert again.to_bytes() == p.to_bytes()
    assert again.inputs() == [("x", Kind.signed(4, 100))]
    assert again.outputs() == [("s", Kind.signed(1, 1000))]
    assert "bfv" in p.explain()
    with pytest.raises(triskel.FormatError):
        Program.from_bytes(p.to_bytes()[:-3])
    with pytest.raises(triskel.FormatError):
        Program.from_bytes(b"not a program")


def test_builder_errors_name_the_operation():
    p = Program()
    x = p.input("x", Kind.real(4))
    y = p.input("y", Kind.real(5))
    with pytest.raises(triskel.ProgramError, match="^add: "):
        p.add(x, y)
    with pytest.raises(triskel.ProgramError, match="^input: "):
        p.input("x", Kind.real(1))
    with pytest.raises(triskel.ProgramError, match="another program"):
        Program().sum(x)
    with pytest.raises(triskel.ProgramError, match="compare"):
        p.compare(x, "<>", x)
    assert issubclass(triskel.ProgramError, triskel.Error)


def test_refused_program():
    p = Program()
    u = p.input("u", Kind.uint(1, 8))
    p.output("s", p.to_signed(u))
    with pytest.raises(triskel.RefusedError):
        triskel.Client(p)
    with pytest.raises(triskel.RefusedError):
        p.explain()


def test_bad_inputs():
    p = dot_program()
    client = triskel.Client(p)
    for bad, what in [
        ({"x": [1.5, 2.0, 3.0, 4.0]}, "in range"),  # floats for integers
        ({"x": [1, 2, 3]}, "in range"),  # wrong length
        ({"x": [1, 2, 3, 400]}, "in range"),  # out of range
        ({"x": [[1, 2], [3, 4]]}, "1-d"),  # wrong shape
        ({"x": ["a", "b", "c", "d"]}, "integers or floats"),  # wrong dtype
        ({"x": [True, False, True, False]}, "in range"),  # bits for integers
        ({}, "missing"),
        ({"x": [1, 2, 3, 4], "z": [1]}, "declared"),
    ]:
        with pytest.raises(triskel.InputError, match=what):
            client.encrypt(bad)
        with pytest.raises(triskel.InputError, match=what):
            triskel.run_local(p, bad)


def test_bad_bytes_and_wrong_parties():
    p = dot_program()
    client, outputs, public, _ = split_run(p, {"x": [1, 2, 3, 4]})
    keys = client.evaluation_keys().to_bytes()
    for load, data in [
        (triskel.EvaluationKeys.from_bytes, keys[: len(keys) // 2]),
        (triskel.EvaluationKeys.from_bytes, outputs.to_bytes()),
        (triskel.EncryptedOutputs.from_bytes, keys),
        (triskel.EncryptedOutputs.from_bytes, outputs.to_bytes()[:-1]),
        (triskel.EncryptedInputs.from_bytes, b""),
        (triskel.Client.from_bytes, b"TRSKCLS"),
        (triskel.PublicIdentity.from_bytes, b"\x00" * 10),
        (triskel.ServerIdentity.from_bytes, public.to_bytes()),
    ]:
        with pytest.raises(triskel.FormatError):
            load(data)
    # Another server's identity: the records do not verify.
    with pytest.raises(triskel.AttestError):
        client.decrypt(outputs, triskel.ServerIdentity.generate().public())
    # Inputs of another client's key set: the server refuses them.
    other = triskel.Client(p)
    server = triskel.Server(triskel.ServerIdentity.generate())
    with pytest.raises(triskel.RefusedError):
        server.run(p, client.evaluation_keys(), other.encrypt({"x": [1, 2, 3, 4]}))


def test_client_and_identity_save_and_load(tmp_path):
    p = dot_program()
    client = triskel.Client(p)
    keys = client.evaluation_keys()
    sent = client.encrypt({"x": [10, 20, 30, 40]})
    client.save(tmp_path / "client.key")
    identity = triskel.ServerIdentity.generate()
    identity.save(str(tmp_path / "server.key"))
    assert (os.stat(tmp_path / "server.key").st_mode & 0o777) == 0o600
    server = triskel.Server(triskel.ServerIdentity.load(tmp_path / "server.key"))
    outputs = server.run(p, keys, sent)
    loaded = triskel.Client.load(tmp_path / "client.key")
    assert loaded.key_set == client.key_set == keys.key_set
    np.testing.assert_array_equal(loaded.decrypt(outputs, identity.public())["s"], [220])
    again = triskel.Client.from_bytes(client.to_bytes())
    np.testing.assert_array_equal(again.decrypt(outputs, identity.public())["s"], [220])
    with pytest.raises(triskel.UnsupportedError):
        loaded.evaluation_keys()
    os.chmod(tmp_path / "server.key", 0o644)
    with pytest.raises(triskel.AttestError):
        triskel.ServerIdentity.load(tmp_path / "server.key")
    with pytest.raises(triskel.InputError):
        triskel.Client.load(tmp_path / "missing.key")


def test_long_calls_release_the_gil():
    import threading
    import time

    program = triskel.programs.load("match")  # TFHE keys: key generation takes a while
    state = {"started": False, "done": False, "ticks": 0}

    def keygen():
        state["started"] = True
        triskel.Client(program)
        state["done"] = True

    t = threading.Thread(target=keygen)
    t.start()
    while not state["started"]:
        time.sleep(0.0001)
    begin = time.monotonic()
    while not state["done"]:
        time.sleep(0.001)  # wakes only when the key generation lets the GIL go
        state["ticks"] += 1
    elapsed = time.monotonic() - begin
    t.join()
    assert elapsed > 0.05, "key generation too fast to tell"
    assert state["ticks"] >= 10, state


def test_round_trips():
    p = Program()
    u = p.input("u", Kind.uint(4, 8))
    p.output("s", p.add_scalar(p.to_signed(u), -100))
    client = triskel.Client(p, allow_round_trips=True)
    server = triskel.Server(triskel.ServerIdentity.generate())
    keys = client.evaluation_keys()
    sent = client.encrypt({"u": [1, 2, 200, 255]})
    first = server.run(p, keys, sent)
    assert not first.is_final
    with pytest.raises(triskel.RefusedError):
        client.decrypt(first, server.public())
    sent = client.continue_round_trips(sent, first, server.public())
    final = server.run(p, keys, sent)
    assert final.is_final
    np.testing.assert_array_equal(client.decrypt(final, server.public())["s"], [-99, -98, 100, 155])
    out = triskel.run_local(p, {"u": [1, 2, 200, 255]}, allow_round_trips=True)
    np.testing.assert_array_equal(out["s"], [-99, -98, 100, 155])


def test_u64_values_above_int64_come_back_as_uint64():
    p = Program()
    x = p.input("x", Kind.uint(2, 64))
    p.output("y", x)
    out = split_run(p, {"x": np.array([2**64 - 1, 5], dtype=np.uint64)})[3]
    assert out["y"].dtype == np.uint64
    np.testing.assert_array_equal(out["y"], np.array([2**64 - 1, 5], dtype=np.uint64))
