"""triskel: fully homomorphic encryption with hand-written SIMD kernels.

Record encrypted work as a `Program`, run it in one process (`run_local`) or
split between a key holder (`Client`) and an evaluator (`Server`). Inputs and
outputs are numpy arrays: int64 for integers, float64 for reals, bool for bits.
"""

from . import programs, remote
from ._triskel import (
    MAX_LEN,
    AttestError,
    Client,
    EncryptedInputs,
    EncryptedOutputs,
    EngineError,
    Error,
    EvaluationKeys,
    FormatError,
    InputError,
    InternalError,
    Kind,
    Program,
    ProgramError,
    PublicIdentity,
    RefusedError,
    RemoteError,
    Server,
    ServerIdentity,
    UnsupportedError,
    Value,
    run_local,
)

__all__ = [
    "MAX_LEN",
    "AttestError",
    "Client",
    "EncryptedInputs",
    "EncryptedOutputs",
    "EngineError",
    "Error",
    "EvaluationKeys",
    "FormatError",
    "InputError",
    "InternalError",
    "Kind",
    "Program",
    "ProgramError",
    "PublicIdentity",
    "RefusedError",
    "RemoteError",
    "Server",
    "ServerIdentity",
    "UnsupportedError",
    "Value",
    "programs",
    "remote",
    "run_local",
]
