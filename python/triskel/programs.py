"""The demo programs of the `triskel` command (`triskel program list`), built
with the `Program` builder: the same programs, byte for byte."""

from typing import Dict, List

import numpy as np

from ._triskel import (
    _BIOMETRIC_DIM,
    _BIOMETRIC_MAX_FEATURE,
    Kind,
    Program,
    _sample_embeddings,
    _sigmoid_coeffs,
)

#: Templates in the match demo.
TEMPLATES = 8
#: The match threshold on the score.
THRESHOLD = 100_000
#: Scores within 2^TOLERANCE_BITS of the threshold may be decided either way.
TOLERANCE_BITS = 14


def _match() -> Program:
    embeddings = _sample_embeddings(TEMPLATES + 1, 7)
    p = Program()
    x = p.input("probe", Kind.signed(_BIOMETRIC_DIM, _BIOMETRIC_MAX_FEATURE))
    decisions = [
        p.threshold_within(p.dot_plain(x, t), THRESHOLD, TOLERANCE_BITS)
        for t in embeddings[1:]
    ]
    p.output("match", p.any(decisions))
    return p


def _values(seed: int, length: int) -> List[float]:
    """Deterministic values in [-1, 1]."""
    return [
        ((i + 1.0) * 0.6180339887 + seed * 0.4142135623) % 1.0 * 2.0 - 1.0
        for i in range(length)
    ]


def _mlp() -> Program:
    w1 = [[v * 0.125 for v in _values(200 + r, 64)] for r in range(4)]
    w2 = [[v * 0.5 for v in _values(300, 4)]]
    p = Program()
    x = p.input("x", Kind.real(64))
    h = p.matvec(w1, x)
    a = p.chebyshev(h, _sigmoid_coeffs(-8.0, 8.0, 7), -8.0, 8.0)
    p.output("y", p.matvec(w2, a))
    return p


def _compare8() -> Program:
    p = Program()
    a = p.input("a", Kind.uint(1, 8))
    b = p.input("b", Kind.uint(1, 8))
    p.output("a>b", p.compare(a, ">", b))
    return p


_PROGRAMS = {"match": _match, "mlp": _mlp, "compare8": _compare8}


def _inputs(name: str) -> Dict[str, np.ndarray]:
    if name == "match":
        return {"probe": np.array(_sample_embeddings(TEMPLATES + 1, 7)[0], dtype=np.int64)}
    if name == "mlp":
        return {"x": np.array(_values(10, 64), dtype=np.float64)}
    return {"a": np.array([200], dtype=np.int64), "b": np.array([13], dtype=np.int64)}


def names() -> List[str]:
    """The demo programs' names: "match", "mlp", "compare8"."""
    return list(_PROGRAMS)


def _check(name: str) -> None:
    if name not in _PROGRAMS:
        from ._triskel import InputError

        raise InputError(
            f"no demo program named {name!r}; known: {', '.join(_PROGRAMS)}"
        )


def load(name: str) -> Program:
    """The demo program `name` (see `names()`); InputError for another name."""
    _check(name)
    return _PROGRAMS[name]()


def example_inputs(name: str) -> Dict[str, np.ndarray]:
    """The inputs the demo runs program `name` on, as numpy arrays."""
    _check(name)
    return _inputs(name)
