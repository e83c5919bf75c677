"""triskel.remote against a `triskel serve` process on 127.0.0.1 with a
temporary store, started and stopped here: a demo program through the
service, verified against the server's identity and compared with
run_local; then hostile cases: bad tokens, another tenant's key set, a
tampered output record."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import triskel
from triskel import remote

BIN = os.environ.get("TRISKEL_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="TRISKEL_BIN (the triskel program) not set")


def token(store, tenant):
    out = subprocess.run(
        [BIN, "serve", "token", "create", "--tenant", tenant, "--store", str(store)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    store = tmp_path_factory.mktemp("store")
    tokens = {t: token(store, t) for t in ("alice", "bob")}
    proc = subprocess.Popen(
        [BIN, "serve", "--listen", "127.0.0.1:0", "--store", str(store), "--workers", "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        url = next((w for w in line.split() if w.startswith("http://")), None)
        assert url, f"no address in {line!r}"
        yield url, tokens, store
    finally:
        proc.kill()
        proc.wait()


def run_remote(r, program, inputs, context=b""):
    client = triskel.Client(program)
    key_set = r.put_keys(client.evaluation_keys())
    assert key_set == client.key_set
    sent = client.encrypt(inputs, context)
    job = r.submit(program, key_set, sent)
    assert job["key_set"] == key_set and job["state"] in ("queued", "running", "done")
    status = r.wait(job["id"], 300)
    assert status["state"] == "done", status
    return client, sent, job, r.outputs(job["id"])


def test_demo_program_through_the_service_equals_run_local(service):
    url, tokens, store = service
    r = remote.Remote(url, tokens["alice"])
    server = r.identity()
    # The identity the service serves is the one in its store.
    assert server.to_bytes() == triskel.PublicIdentity.from_bytes((store / "identity.public").read_bytes()).to_bytes()
    program = triskel.programs.load("compare8")
    for a, b in ((200, 13), (7, 9)):
        inputs = {"a": np.array([a]), "b": np.array([b])}
        client, sent, job, outputs = run_remote(r, program, inputs, b"ctx")
        remote.verify(client, sent, outputs, server)
        plain = client.decrypt(outputs, server)
        want = triskel.run_local(program, inputs)
        assert list(plain) == list(want)
        np.testing.assert_array_equal(plain["a>b"], want["a>b"])
        np.testing.assert_array_equal(plain["a>b"], [a > b])
    # The job's state, an idempotent retry, then deletion.
    assert r.job(job["id"])["state"] == "done"
    again = r.submit(program, client.key_set, sent, idempotency_key="k1")
    assert r.submit(program, client.key_set, sent, idempotency_key="k1")["id"] == again["id"]
    r.wait(again["id"], 300)
    r.cancel(again["id"])
    with pytest.raises(triskel.RemoteError) as e:
        r.job(again["id"])
    assert e.value.status == 404
    r.cancel(job["id"])
    r.delete_keys(client.key_set)
    with pytest.raises(triskel.RemoteError) as e:
        r.submit(program, client.key_set, sent)
    assert e.value.status == 404 and e.value.code == "not_found"


def test_bad_tokens_are_refused(service):
    url, tokens, _ = service
    program = triskel.programs.load("compare8")
    client = triskel.Client(program)
    for bad in (None, "", "tsk_" + "0" * 64, tokens["alice"][:-1], "Bearer x", tokens["alice"] + "0"):
        r = remote.Remote(url, bad)
        # The server answers 401 before it reads the upload and closes the
        # connection; the client may see that as a broken upload instead.
        with pytest.raises(triskel.RemoteError) as e:
            r.put_keys(client.evaluation_keys())
        assert e.value.status in (401, None), bad
        for call in (lambda: r.job("1"), lambda: r.cancel("1"), lambda: r.delete_keys("ab" * 32)):
            with pytest.raises(triskel.RemoteError) as e:
                call()
            assert e.value.status == 401 and e.value.code == "unauthorized", bad
    # Nothing was stored for anyone.
    with pytest.raises(triskel.RemoteError) as e:
        remote.Remote(url, tokens["alice"]).delete_keys(client.key_set)
    assert e.value.status == 404
    # The identity is public: no token needed.
    assert remote.Remote(url, None).identity().key_id
    # Nothing listens there: a transport error, without status.
    with pytest.raises(triskel.RemoteError) as e:
        remote.Remote("http://127.0.0.1:9", tokens["alice"]).identity()
    assert e.value.status is None and e.value.code is None
    for url_bad in ("ftp://127.0.0.1:1", "not a url", "http://"):
        with pytest.raises(triskel.Error):
            remote.Remote(url_bad, tokens["alice"])


def test_another_tenants_key_set_and_jobs_are_not_found(service):
    url, tokens, _ = service
    alice, bob = remote.Remote(url, tokens["alice"]), remote.Remote(url, tokens["bob"])
    program = triskel.programs.load("compare8")
    inputs = {"a": [1], "b": [2]}
    client, sent, job, _ = run_remote(bob, program, inputs)
    # Alice submits under Bob's key set, reads and deletes Bob's things: 404, as for unknown ids.
    for call in (
        lambda: alice.submit(program, client.key_set, sent),
        lambda: alice.job(job["id"]),
        lambda: alice.outputs(job["id"]),
        lambda: alice.cancel(job["id"]),
        lambda: alice.delete_keys(client.key_set),
    ):
        with pytest.raises(triskel.RemoteError) as e:
            call()
        assert e.value.status == 404 and e.value.code == "not_found"
    assert bob.job(job["id"])["state"] == "done"
    # Inputs of another key set than the one named: refused before sending.
    other = triskel.Client(program)
    with pytest.raises(triskel.InputError, match="key set"):
        bob.submit(program, other.key_set, sent)
    with pytest.raises(triskel.Error):
        bob.wait(job["id"], -1.0)


def test_tampered_outputs_do_not_verify(service):
    url, tokens, _ = service
    r = remote.Remote(url, tokens["alice"])
    server = r.identity()
    program = triskel.programs.load("compare8")
    client, sent, job, outputs = run_remote(r, program, {"a": [5], "b": [3]})
    remote.verify(client, sent, outputs, server)
    good = outputs.to_bytes()
    # A byte of the record's signatures (the end of the bytes), and a byte of
    # the output ciphertext (before the record) flipped.
    verified = 0
    for at in (len(good) - 100, len(good) // 4):
        bad = bytearray(good)
        bad[at] ^= 0x01
        try:
            tampered = triskel.EncryptedOutputs.from_bytes(bytes(bad))
        except triskel.FormatError:
            continue
        verified += 1
        with pytest.raises(triskel.AttestError):
            remote.verify(client, sent, tampered, server)
        with pytest.raises((triskel.AttestError, triskel.FormatError)):
            client.decrypt(tampered, server)
    assert verified > 0  # the bytes still loaded: the records refused them
    # Honest outputs against other inputs than those sent, or another identity.
    other_sent = client.encrypt({"a": [5], "b": [3]})
    with pytest.raises(triskel.AttestError):
        remote.verify(client, other_sent, outputs, server)
    with pytest.raises(triskel.AttestError):
        remote.verify(client, sent, outputs, triskel.ServerIdentity.generate().public())
    with pytest.raises(triskel.AttestError):
        client.decrypt(outputs, triskel.ServerIdentity.generate().public())


SLOW_SERVER = """
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
c.recv(65536)
time.sleep(2)
c.sendall(b"HTTP/1.1 404 Not Found\\r\\ncontent-length: 0\\r\\n\\r\\n")
c.close()
"""


def test_calls_release_the_gil():
    # A server that answers after 2 s: while the call waits, this thread runs.
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        r = remote.Remote(f"http://127.0.0.1:{proc.stdout.readline().strip()}", None)
        errors = []

        def call():
            try:
                r.job("1")
            except triskel.RemoteError as e:
                errors.append(e)

        t = threading.Thread(target=call)
        start = time.monotonic()
        t.start()
        time.sleep(0.2)
        assert t.is_alive() and time.monotonic() - start < 1.5
        t.join(30)
        assert errors and errors[0].status == 404
    finally:
        proc.kill()
        proc.wait()
