"""A client of `triskel serve` (the Rust client; calls release the GIL)."""

from typing import Optional, TypedDict

from . import Client, EncryptedInputs, EncryptedOutputs, EvaluationKeys, Program, PublicIdentity
from . import RemoteError as RemoteError

class Job(TypedDict):
    """A job as the server reports it."""

    id: str
    #: "queued", "running", "done", "failed" or "cancelled".
    state: str
    #: Why a failed job failed.
    error: Optional[str]
    key_set: str
    #: Starts of the job (more than one after a server restart re-ran it).
    runs: int
    created_ms: int
    started_ms: Optional[int]
    finished_ms: Optional[int]

class Remote:
    """A client of one `triskel serve` server as one tenant. Errors: the
    server's answers and transport failures raise RemoteError; a job not
    finished in time, RefusedError; bytes that do not load, FormatError."""

    def __init__(self, url: str, token: Optional[str] = None) -> None:
        """A client of the server at `url` (`http://host:port`) with the
        tenant's bearer `token` (kept in memory that is wiped when dropped)."""
    def identity(self) -> PublicIdentity:
        """The server's public attestation identity (no token needed).
        Compare it with a copy obtained out of band."""
    def put_keys(self, keys: EvaluationKeys) -> str:
        """Uploads an evaluation-key bundle; returns its key-set id (hex)."""
    def delete_keys(self, key_set: str) -> None:
        """Removes a key set of this tenant (409 while a job uses it)."""
    def submit(
        self,
        program: Program,
        key_set: str,
        inputs: EncryptedInputs,
        idempotency_key: Optional[str] = None,
    ) -> Job:
        """Submits `program` on `inputs`, which must be encrypted under
        `key_set` (InputError otherwise); a retry with the same
        `idempotency_key` returns the same job."""
    def job(self, id: str) -> Job:
        """The state of a job."""
    def wait(self, id: str, timeout: float) -> Job:
        """Polls a job until it is done, failed or cancelled; RefusedError
        when it is not after `timeout` seconds."""
    def outputs(self, id: str) -> EncryptedOutputs:
        """The encrypted outputs of a done job, with the server's records."""
    def cancel(self, id: str) -> None:
        """Cancels a queued or running job; deletes a finished one and its outputs."""

def verify(
    client: Client, sent: EncryptedInputs, outputs: EncryptedOutputs, server_public: PublicIdentity
) -> None:
    """Checks `outputs` against what `client` knows: its key set and program,
    the inputs `sent` (their digests and context) and every record under
    `server_public`. Raises AttestError when anything differs."""
