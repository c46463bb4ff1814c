"""A throw-away self-signed certificate for 127.0.0.1, so kubectl can talk TLS to the stand-in.

client-go sends a bearer token only over TLS (kubernetes/kubectl#744): against plain http, kubectl sends no
credentials at all. The stand-in therefore accepts TLS on the same port, and its kubeconfig points kubectl there
with this certificate as the cluster CA. Made once per process with the `openssl` binary; None if it is missing.
"""

from __future__ import annotations

import atexit
import shutil
import ssl
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class TlsMaterial:
    cert: Path
    key: Path

    @property
    def cert_pem(self) -> bytes:
        return self.cert.read_bytes()

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


_lock = threading.Lock()


@cache
def _generate() -> TlsMaterial | None:
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="kube-standin-tls-"))
    atexit.register(shutil.rmtree, folder, True)
    cert, key = folder / "tls.crt", folder / "tls.key"
    cmd = [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-days", "2", "-subj", "/CN=kube-standin", "-keyout", str(key), "-out", str(cert),
           "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
           "-addext", "basicConstraints=critical,CA:TRUE",
           "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
           "-addext", "extendedKeyUsage=serverAuth"]
    done = subprocess.run(cmd, capture_output=True, check=False, timeout=30)
    return TlsMaterial(cert, key) if done.returncode == 0 else None


def tls_material() -> TlsMaterial | None:
    with _lock:
        return _generate()
