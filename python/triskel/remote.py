"""A client of `triskel serve`: upload evaluation keys, submit jobs, fetch
their encrypted outputs with the server's records.

It is the Rust client (`triskel_serve::remote`); every call releases the
GIL while it waits for the network. Verify what comes back before trusting
it: `verify(client, sent, outputs, server_public)` checks every record
against the server's identity and the inputs this client sent, and
`Client.decrypt` verifies again before decrypting.

    remote = triskel.remote.Remote("http://127.0.0.1:7340", token)
    server = remote.identity()            # compare with a pinned copy
    key_set = remote.put_keys(client.evaluation_keys())
    sent = client.encrypt(inputs)
    job = remote.submit(program, key_set, sent)
    remote.wait(job["id"], timeout=600)
    outputs = remote.outputs(job["id"])
    triskel.remote.verify(client, sent, outputs, server)
    plain = client.decrypt(outputs, server)
"""

from ._triskel import Remote, RemoteError
from ._triskel import _remote_verify as verify

__all__ = ["Remote", "RemoteError", "verify"]
