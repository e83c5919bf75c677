"""Evaluation on a Ray cluster: pools of evaluator actors that each hold one
tenant's evaluation keys, and identification over a sharded template
database.

Needs Ray (`pip install "ray>=2.9"`) and a connected cluster (`ray.init(...)`
before the first call). The actors are `triskel.Server`s: they hold the
server's attestation identity and a tenant's public evaluation keys, never a
secret key of a client. Each actor loads the keys once, from the object
store, and keeps them for every job it runs.

    ray.init()
    keys = client.evaluation_keys()
    sent = [client.encrypt({"x": x}) for x in batch]
    for inputs, outputs in zip(batch, triskel.ray.map_encrypted(
            program, keys, sent, actors=4, identity=server_identity)):
        plain = client.decrypt(outputs, server_identity.public())

Failures: a job whose actor dies (a killed process, a lost node) runs again
on another actor, and a replacement actor joins the pool; a job is given up
only after `retries` such failures, and then `map` raises `RayEvaluationError`
naming it. Errors of the library (inputs that do not fit the program, for
example) are raised at once as their own classes. No job is dropped: each
input yields its outputs, in input order, or the call raises.
"""

from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
import numpy.typing as npt
import ray

import triskel

from ._triskel import (
    EncryptedInputs,
    EncryptedOutputs,
    EvaluationKeys,
    Kind,
    Program,
    PublicIdentity,
    ServerIdentity,
)

__all__ = [
    "EvaluatorPool",
    "Identification",
    "RayEvaluationError",
    "identification_programs",
    "map_encrypted",
]


class RayEvaluationError(triskel.Error):
    """A job that failed on `retries + 1` actors in a row, each of which died
    while running it."""


@ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
class _Evaluator:
    """One evaluator: a `triskel.Server` with one program and one key set,
    loaded once when the actor starts."""

    def __init__(self, program: bytes, keys: bytes, identity: bytes) -> None:
        # Ray resolves the object references these came as: the keys cross
        # the object store once per actor, not once per job.
        self._program = Program.from_bytes(program)
        self._keys = EvaluationKeys.from_bytes(keys)
        self._server = triskel.Server(ServerIdentity.from_bytes(identity))

    def ready(self) -> str:
        return self._keys.key_set

    def run(self, inputs: bytes) -> Tuple[bool, str, bytes]:
        """(True, "", outputs) or (False, error class, message): a library
        error is an answer, not a failure of the actor."""
        try:
            sent = EncryptedInputs.from_bytes(inputs)
            out = self._server.run(self._program, self._keys, sent)
            return True, "", out.to_bytes()
        except triskel.Error as e:
            return False, type(e).__name__, str(e).encode()


def _raise(name: str, message: bytes) -> None:
    cls = getattr(triskel, name, triskel.Error)
    if not (isinstance(cls, type) and issubclass(cls, triskel.Error)):
        cls = triskel.Error
    raise cls(message.decode(errors="replace"))


class EvaluatorPool:
    """`actors` evaluator actors for one program and one tenant's evaluation
    keys, signing with `identity` (the server's secret identity: it is put in
    the object store once, for the actors).

    The keys and the program are put in the object store once; each actor
    deserializes them once. Use `map` any number of times, then `close`
    (or use the pool as a context manager)."""

    def __init__(
        self,
        program: Program,
        keys: EvaluationKeys,
        *,
        actors: int,
        identity: ServerIdentity,
        retries: int = 3,
    ) -> None:
        if not isinstance(actors, int) or actors < 1:
            raise triskel.InputError(f"actors must be a positive integer, not {actors!r}")
        if not isinstance(retries, int) or retries < 0:
            raise triskel.InputError(f"retries must be an integer >= 0, not {retries!r}")
        self._refs = (
            ray.put(program.to_bytes()),
            ray.put(keys.to_bytes()),
            ray.put(identity.to_bytes()),
        )
        self.retries = retries
        #: Jobs run again because their actor died (over every `map`).
        self.reruns = 0
        #: The live actors (a dead one is replaced when a job finds it dead).
        self.actors: List["ray.actor.ActorHandle"] = [self._start() for _ in range(actors)]
        ray.get([a.ready.remote() for a in self.actors])

    def _start(self) -> "ray.actor.ActorHandle":
        return _Evaluator.remote(*self._refs)  # type: ignore[attr-defined]

    def _replace(self, dead: "ray.actor.ActorHandle") -> None:
        if dead in self.actors:
            self.actors[self.actors.index(dead)] = self._start()

    def map(
        self, inputs: Iterable[EncryptedInputs], *, max_in_flight: Optional[int] = None
    ) -> Iterator[EncryptedOutputs]:
        """Runs the program on each `EncryptedInputs` of `inputs` and yields
        the `EncryptedOutputs` in input order. At most `max_in_flight` jobs
        (default two per actor) are outstanding at once (running, queued, or
        finished and waiting for an earlier one), and `inputs` is read only
        as fast as jobs finish (backpressure)."""
        yield from _schedule(((self, i) for i in inputs), self._in_flight(max_in_flight))

    def _in_flight(self, max_in_flight: Optional[int]) -> int:
        n = 2 * len(self.actors) if max_in_flight is None else max_in_flight
        if not isinstance(n, int) or n < 1:
            raise triskel.InputError(f"max_in_flight must be a positive integer, not {n!r}")
        return n

    def close(self) -> None:
        """Ends the actors."""
        for a in self.actors:
            ray.kill(a)
        self.actors = []

    def __enter__(self) -> "EvaluatorPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _schedule(
    jobs: Iterable[Tuple[EvaluatorPool, EncryptedInputs]], max_in_flight: int
) -> Iterator[EncryptedOutputs]:
    """Runs each (pool, inputs) job on the least loaded live actor of its
    pool and yields the outputs in job order; a job whose actor dies runs
    again on another one."""
    jobs = iter(jobs)
    pending: Dict["ray.ObjectRef", Tuple[int, EvaluatorPool, bytes, "ray.actor.ActorHandle", int]] = {}
    load: Dict["ray.actor.ActorHandle", int] = {}
    done: Dict[int, EncryptedOutputs] = {}
    next_job, next_out, exhausted = 0, 0, False

    def submit(index: int, pool: EvaluatorPool, data: bytes, failures: int, avoid=None) -> None:
        if not pool.actors:
            raise triskel.InputError("the pool is closed")
        choices = [a for a in pool.actors if a is not avoid] or pool.actors
        actor = min(choices, key=lambda a: load.get(a, 0))
        load[actor] = load.get(actor, 0) + 1
        pending[actor.run.remote(data)] = (index, pool, data, actor, failures)

    try:
        while True:
            while not exhausted and len(pending) + len(done) < max_in_flight:
                try:
                    pool, inputs = next(jobs)
                except StopIteration:
                    exhausted = True
                    break
                if not isinstance(inputs, EncryptedInputs):
                    raise triskel.InputError(
                        f"job {next_job}: EncryptedInputs expected, not {type(inputs).__name__}"
                    )
                submit(next_job, pool, inputs.to_bytes(), 0)
                next_job += 1
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
            if not pending:
                if exhausted:
                    return
                continue
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            index, pool, data, actor, failures = pending.pop(ref)
            load[actor] -= 1
            try:
                ok, name, answer = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as e:
                # The actor died with the job (or its result was lost): run it
                # again elsewhere, and start a replacement actor.
                # Its other jobs fail the same way as they are reached.
                pool._replace(actor)
                if failures >= pool.retries:
                    raise RayEvaluationError(
                        f"job {index}: its actor died {failures + 1} times, the last time: {e}"
                    ) from e
                pool.reruns += 1
                submit(index, pool, data, failures + 1, avoid=actor)
                continue
            if not ok:
                _raise(name, answer)
            done[index] = EncryptedOutputs.from_bytes(answer)
    finally:
        # Jobs nobody will read (the caller stopped iterating, or a job
        # failed): cancelled where Ray still can.
        for ref in pending:
            try:
                ray.cancel(ref)
            except Exception:
                pass


def map_encrypted(
    program: Program,
    keys: EvaluationKeys,
    inputs_iterable: Iterable[EncryptedInputs],
    *,
    actors: int,
    identity: ServerIdentity,
    retries: int = 3,
    max_in_flight: Optional[int] = None,
) -> List[EncryptedOutputs]:
    """Runs `program` with `keys` on every `EncryptedInputs` of
    `inputs_iterable` over a pool of `actors` evaluators signing with
    `identity`, and returns the `EncryptedOutputs` in input order. The pool
    is started for this call and ended after it; for many calls on the same
    keys, keep an `EvaluatorPool`."""
    with EvaluatorPool(program, keys, actors=actors, identity=identity, retries=retries) as pool:
        return list(pool.map(inputs_iterable, max_in_flight=max_in_flight))


def identification_programs(
    templates: "npt.ArrayLike",
    threshold: int,
    tolerance_bits: int,
    shards: int,
    feature_bound: int,
) -> List[Program]:
    """One program per shard of `templates` (rows of integers, split into
    `shards` contiguous shards as even as can be): input "probe" (signed,
    |value| <= `feature_bound`), output "match", the bit "some template of
    the shard scores >= `threshold`" (`threshold_within` with
    `tolerance_bits`, ORed by `any`), decided homomorphically."""
    t = np.asarray(templates)
    if t.ndim != 2 or t.shape[0] == 0 or t.dtype.kind not in "iu":
        raise triskel.InputError("templates must be a non-empty 2-d array of integers")
    if not isinstance(shards, int) or not 1 <= shards <= t.shape[0]:
        raise triskel.InputError(f"shards must be an integer in [1, {t.shape[0]}], not {shards!r}")
    programs = []
    for part in np.array_split(t, shards):
        p = Program()
        probe = p.input("probe", Kind.signed(t.shape[1], feature_bound))
        decisions = [
            p.threshold_within(p.dot_plain(probe, row.tolist()), threshold, tolerance_bits)
            for row in part
        ]
        p.output("match", p.any(decisions) if len(decisions) > 1 else decisions[0])
        programs.append(p)
    return programs


class Identification:
    """Identification of a probe against a template database sharded over
    Ray actors (one `EvaluatorPool` of one actor per shard), made by the key
    holder: it builds the shard programs, generates each shard's keys (one
    `Client` per shard) and starts the pools.

    `identify(probe)` encrypts the probe for every shard, runs all shards at
    once, verifies each shard's records against the server's identity,
    decrypts the shard bits and ORs them. Each shard's decision is
    homomorphic: no score is ever decrypted. The OR of the shard bits is
    computed by the key holder after decryption, so it learns which shard
    matched: the router cannot yet OR ciphertexts that come out of several
    programs (each shard's keys are made for its own program, and a
    program's inputs come only from `Client.encrypt`)."""

    def __init__(
        self,
        templates: "npt.ArrayLike",
        threshold: int,
        tolerance_bits: int,
        *,
        shards: int,
        identity: ServerIdentity,
        feature_bound: int,
    ) -> None:
        self.programs = identification_programs(
            templates, threshold, tolerance_bits, shards, feature_bound
        )
        self.clients = [triskel.Client(p) for p in self.programs]
        self._public: PublicIdentity = identity.public()
        self.pools: List[EvaluatorPool] = []
        try:
            for p, c in zip(self.programs, self.clients):
                self.pools.append(EvaluatorPool(p, c.evaluation_keys(), actors=1, identity=identity))
        except BaseException:
            self.close()
            raise

    def identify(self, probe: "npt.ArrayLike") -> bool:
        """True when some template scores >= the threshold against `probe`
        (scores within 2^tolerance_bits of it may go either way)."""
        jobs = [(pool, c.encrypt({"probe": probe})) for pool, c in zip(self.pools, self.clients)]
        bits = []
        for client, outputs in zip(self.clients, _schedule(jobs, len(jobs))):
            bits.append(bool(client.decrypt(outputs, self._public)["match"][0]))
        return any(bits)

    def close(self) -> None:
        """Ends the shards' actors."""
        for pool in self.pools:
            pool.close()
        self.pools = []

    def __enter__(self) -> "Identification":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
