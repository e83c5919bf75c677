"""triskel: fully homomorphic encryption with hand-written SIMD kernels.

Inputs are dicts of input names to 1-d numpy arrays or sequences: integer
arrays for integer kinds, float arrays for reals, bool arrays for bits.
Outputs are dicts of output names (in the program's order) to numpy arrays:
int64 for integers (uint64 when a value exceeds 2^63 - 1), float64 for
reals, bool for bits.
"""

from os import PathLike
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import programs as programs
from . import remote as remote

_Path = Union[str, "PathLike[str]"]
_Array = Union[npt.ArrayLike, Sequence[int], Sequence[float], Sequence[bool]]
_Inputs = Mapping[str, _Array]
_Outputs = Dict[str, np.ndarray]

#: Most values in one vector.
MAX_LEN: int

class Error(Exception):
    """Every error of triskel; the message is the library's."""

class ProgramError(Error):
    """An operation recorded with operands it cannot take (the message names the operation)."""

class RefusedError(Error):
    """Work refused before any of it ran: by the planner, or by a client or server checking what it was sent."""

class UnsupportedError(Error):
    """A feature the plan needs is not built."""

class InputError(Error):
    """Inputs that do not match the program (names, kinds, shapes, dtypes, ranges), or a file that does not read."""

class FormatError(Error):
    """Bytes that do not load: truncated, damaged, or of another type."""

class AttestError(Error):
    """A record that does not verify, or an identity that does not load or is not stored safely."""

class EngineError(Error):
    """An engine's error (BFV, CKKS, TFHE, ring, kernels, transitions) or the cost model's."""

class InternalError(Error):
    """A failure inside triskel itself."""

class RemoteError(Error):
    """A call to a `triskel serve` server that failed: the server's answer
    (`status`, `code`) or the transport (both None)."""

    #: The HTTP status of the server's answer; None for a transport failure.
    status: Optional[int]
    #: The server's error code ("unauthorized", "not_found", ...); None for a transport failure.
    code: Optional[str]

class Kind:
    """What an encrypted value holds: its kind and length."""

    @staticmethod
    def modular(len: int, modulus: int) -> Kind:
        """`len` integers modulo a prime `modulus` (exact, wrapping; BFV)."""
    @staticmethod
    def signed(len: int, bound: int) -> Kind:
        """`len` signed integers of absolute value at most `bound` (exact; BFV)."""
    @staticmethod
    def real(len: int) -> Kind:
        """`len` reals in [-1, 1] (approximate; CKKS)."""
    @staticmethod
    def uint(len: int, bits: int) -> Kind:
        """`len` unsigned integers of `bits` bits: 8, 16, 32 or 64 (wrapping; TFHE)."""
    @staticmethod
    def bit(len: int) -> Kind:
        """`len` bits (results of comparisons; TFHE)."""
    @property
    def len(self) -> int:
        """The number of values."""
    @property
    def name(self) -> str:
        """"modular", "signed", "real", "uint" or "bit"."""
    @property
    def modulus(self) -> Optional[int]:
        """The modulus of a modular kind, else None."""
    @property
    def bound(self) -> Optional[int]:
        """The bound of a signed kind, else None."""
    @property
    def bits(self) -> Optional[int]:
        """The width of a uint kind, else None."""
    def describe(self) -> str:
        """The kind as the library's messages name it ("4 signed integers |v| <= 100")."""

class Value:
    """A handle to a value of one program, returned by its operations."""

    @property
    def index(self) -> int:
        """The value's index in its program."""

_Scalar = Union[int, float]

class Program:
    """A program of encrypted work: inputs by kind, operations, named outputs.

    Every operation checks its operands' kinds and shapes as it is recorded
    and raises ProgramError naming the operation.
    """

    def __init__(self) -> None:
        """An empty program."""
    def input(self, name: str, kind: Kind) -> Value:
        """Declares an encrypted input named `name` of kind `kind`."""
    def output(self, name: str, v: Value) -> None:
        """Marks `v` as an output named `name`: decrypted for the key holder."""
    def add(self, a: Value, b: Value) -> Value:
        """Element-wise a + b."""
    def sub(self, a: Value, b: Value) -> Value:
        """Element-wise a - b."""
    def mul(self, a: Value, b: Value) -> Value:
        """Element-wise product."""
    def add_scalar(self, a: Value, c: _Scalar) -> Value:
        """Element-wise a + c (an int for integer kinds, a float for reals)."""
    def mul_scalar(self, a: Value, c: _Scalar) -> Value:
        """Element-wise a * c (an int for integer kinds, a float for reals)."""
    def dot(self, a: Value, b: Value) -> Value:
        """Inner product of two encrypted vectors."""
    def dot_plain(self, a: Value, weights: Sequence[_Scalar]) -> Value:
        """Inner product with plaintext weights."""
    def sum(self, a: Value) -> Value:
        """The sum of a vector's values."""
    def polynomial(self, a: Value, coeffs: Sequence[_Scalar]) -> Value:
        """sum_i coeffs[i] x^i, element-wise."""
    def chebyshev(self, a: Value, coeffs: Sequence[float], lo: float, hi: float) -> Value:
        """A Chebyshev series on [lo, hi], element-wise (reals)."""
    def matvec(self, rows: Sequence[Sequence[float]], a: Value) -> Value:
        """A plaintext matrix (rows of floats) times an encrypted real vector."""
    def compare(self, a: Value, op: str, b: Value) -> Value:
        """Element-wise comparison of two encrypted vectors (`op`: ==, !=, <, <=, >, >=): bits."""
    def compare_scalar(self, a: Value, op: str, c: _Scalar) -> Value:
        """Element-wise comparison with a constant: bits."""
    def threshold(self, a: Value, threshold: _Scalar) -> Value:
        """Element-wise a >= threshold: bits."""
    def threshold_within(self, a: Value, threshold: int, tolerance_bits: int) -> Value:
        """Element-wise a >= threshold on signed integers, where values within
        2^tolerance_bits of the threshold may be decided either way."""
    def threshold_real(self, a: Value, threshold: float, tolerance: float) -> Value:
        """Element-wise a >= threshold on reals, right whenever |a - threshold| > tolerance."""
    def argmax(self, a: Value) -> Value:
        """The index of the largest value (the first on ties)."""
    def argmax_within(self, values: Sequence[Value], tolerance_bits: int) -> Value:
        """The index of a largest of the signed values of `values` (concatenated),
        where values within 2^tolerance_bits of the largest may win."""
    def any(self, bits: Sequence[Value]) -> Value:
        """One bit: is any bit of `bits` (bit vectors) 1?"""
    def lookup(self, a: Value, table: Sequence[int]) -> Value:
        """Element-wise table[x] as u8 (256 entries for u8 values, 2 B + 1 for
        signed values of bound B, entry x + B for x)."""
    def to_signed(self, a: Value) -> Value:
        """u8..u32 values or bits as signed integers (a key-holder round trip)."""
    def to_real(self, a: Value, scale: float) -> Value:
        """Integers or bits times `scale` as reals (a key-holder round trip)."""
    def select(self, cond: Value, a: Value, b: Value) -> Value:
        """Element-wise `a if cond else b`."""
    def kind(self, v: Value) -> Kind:
        """The kind of a value."""
    def inputs(self) -> List[Tuple[str, Kind]]:
        """The declared inputs, in order: (name, kind)."""
    def outputs(self) -> List[Tuple[str, Kind]]:
        """The named outputs, in order: (name, kind)."""
    def __len__(self) -> int:
        """The number of recorded nodes (inputs and operations)."""
    def explain(
        self,
        *,
        allow_round_trips: bool = False,
        ckks_scale_log2: Optional[int] = None,
        max_ciphertext_bytes: Optional[int] = None,
    ) -> str:
        """The plan of this program on this machine's cost model: each step's
        engine, parameter set and predicted time. Raises RefusedError for a
        program the planner refuses."""
    def to_bytes(self) -> bytes:
        """The program's versioned bytes."""
    @staticmethod
    def from_bytes(data: bytes) -> Program:
        """Loads `Program.to_bytes` output, checking every operation again."""

def run_local(
    program: Program,
    inputs: _Inputs,
    *,
    allow_round_trips: bool = False,
    ckks_scale_log2: Optional[int] = None,
    max_ciphertext_bytes: Optional[int] = None,
) -> _Outputs:
    """Runs `program` in one process: plans it, generates its keys, encrypts
    `inputs`, evaluates and decrypts. Returns the outputs as numpy arrays."""

class EvaluationKeys:
    """The public material a server evaluates a program with, carrying the plan choice it was made for."""

    def to_bytes(self) -> bytes:
        """The versioned bytes (seed-compressed), ending with the key-set id."""
    @staticmethod
    def from_bytes(data: bytes) -> EvaluationKeys:
        """Loads `EvaluationKeys.to_bytes` output; every key is checked."""
    @property
    def key_set(self) -> str:
        """The key-set id (hex)."""
    @property
    def choice(self) -> str:
        """The plan choice the keys were made for, in one line."""

class EncryptedInputs:
    """Encrypted inputs, from `Client.encrypt`."""

    def to_bytes(self) -> bytes:
        """The versioned bytes."""
    @staticmethod
    def from_bytes(data: bytes) -> EncryptedInputs:
        """Loads `EncryptedInputs.to_bytes` output."""
    @property
    def key_set(self) -> str:
        """The key-set id (hex) they were encrypted under."""
    @property
    def context(self) -> bytes:
        """The context the server's records bind."""

class EncryptedOutputs:
    """Encrypted outputs with the server's signed records, from `Server.run`."""

    def to_bytes(self) -> bytes:
        """The versioned bytes."""
    @staticmethod
    def from_bytes(data: bytes) -> EncryptedOutputs:
        """Loads `EncryptedOutputs.to_bytes` output."""
    @property
    def is_final(self) -> bool:
        """True for the program's outputs; False for values the key holder must
        convert first (`Client.continue_round_trips`)."""
    @property
    def key_set(self) -> str:
        """The key-set id (hex) they were computed under."""
    def __len__(self) -> int:
        """The number of entries."""

class PublicIdentity:
    """The public part of a server identity: what clients verify records with."""

    def to_bytes(self) -> bytes:
        """The versioned bytes."""
    @staticmethod
    def from_bytes(data: bytes) -> PublicIdentity:
        """Loads `PublicIdentity.to_bytes` output."""
    @property
    def key_id(self) -> str:
        """The key id (hex)."""

class ServerIdentity:
    """A server's secret attestation identity: it signs the records of the outputs it computes."""

    @staticmethod
    def generate() -> ServerIdentity:
        """A new identity of the default signature suite."""
    def public(self) -> PublicIdentity:
        """The public part."""
    def to_bytes(self) -> bytes:
        """The secret bytes (keep them secret)."""
    @staticmethod
    def from_bytes(data: bytes) -> ServerIdentity:
        """Loads `ServerIdentity.to_bytes` output (each secret key checked against its public key)."""
    def save(self, path: _Path) -> None:
        """Writes the secret identity to a new file readable by its owner only."""
    @staticmethod
    def load(path: _Path) -> ServerIdentity:
        """Loads a file `save` (or `triskel server identity`) wrote; refused
        when group or others may access it."""

class Client:
    """The key holder of one program: plans it, generates exactly the keys
    the plan needs, encrypts inputs, and decrypts outputs after verifying
    the server's records."""

    def __init__(
        self,
        program: Program,
        *,
        allow_round_trips: bool = False,
        ckks_scale_log2: Optional[int] = None,
        max_ciphertext_bytes: Optional[int] = None,
    ) -> None:
        """Plans `program` with this machine's cost model and generates its keys."""
    def evaluation_keys(self) -> EvaluationKeys:
        """The evaluation keys for a server (public material only). Raises
        UnsupportedError for a client loaded from its saved state."""
    def encrypt(self, inputs: _Inputs, context: bytes = b"") -> EncryptedInputs:
        """Encrypts `inputs`, with a context the server's records bind."""
    def decrypt(self, outputs: EncryptedOutputs, server_public: PublicIdentity) -> _Outputs:
        """Verifies every record of `outputs` against `server_public`, then
        decrypts them: numpy arrays in the program's output order."""
    def continue_round_trips(
        self, sent: EncryptedInputs, outputs: EncryptedOutputs, server_public: PublicIdentity
    ) -> EncryptedInputs:
        """The key holder's half of the round trips `outputs` ask for: returns
        `sent` with the converted values added, for the server's next run."""
    @property
    def key_set(self) -> str:
        """The key-set id (hex) of its evaluation keys."""
    def explain(self) -> str:
        """The plan the keys were made for."""
    def to_bytes(self) -> bytes:
        """The secret state (keys, plan, the inputs sent); keep it secret."""
    @staticmethod
    def from_bytes(data: bytes) -> Client:
        """Loads `Client.to_bytes` output."""
    def save(self, path: _Path) -> None:
        """Writes the secret state to a new file readable by its owner only."""
    @staticmethod
    def load(path: _Path) -> Client:
        """Loads a state `save` wrote; refused when group or others may access it."""

class Server:
    """The evaluator of outsourced work: holds its attestation identity and
    nothing secret of any client."""

    def __init__(self, identity: ServerIdentity) -> None:
        """A server signing its outputs' records with `identity`."""
    def public(self) -> PublicIdentity:
        """The public part of its identity, which clients verify records with."""
    def run(self, program: Program, keys: EvaluationKeys, inputs: EncryptedInputs) -> EncryptedOutputs:
        """Runs `program` with `keys` on `inputs`; raises RefusedError, before
        any work, for keys or inputs that do not fit the program."""
