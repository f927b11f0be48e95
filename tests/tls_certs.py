"""Certificates for the TLS tests, made at test time with the `openssl` command: a CA, server
certificates for 127.0.0.1 / localhost, client certificates, and a second CA that signs nothing
the servers trust."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


def openssl_available() -> bool:
    return shutil.which("openssl") is not None


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@dataclass
class CertSet:
    dir: Path

    def path(self, name: str) -> str:
        return str(self.dir / name)

    @property
    def ca(self) -> str:
        return self.path("ca.crt")


def _ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-sha256",
             "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)


def _signed(d: Path, ca: str, name: str, serial: int, server: bool, passphrase: str | None = None) -> None:
    key_args = ["-nodes"] if passphrase is None else ["-passout", f"pass:{passphrase}"]
    _openssl("req", "-newkey", "rsa:2048", *key_args, "-subj", f"/CN={name}",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    ext = d / f"{name}.ext"
    if server:
        ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    else:
        ext.write_text("extendedKeyUsage=clientAuth\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
             "-set_serial", str(serial), "-days", "2", "-sha256", "-extfile", ext.name,
             "-out", f"{name}.crt", cwd=d)


def make_certs(d: Path) -> CertSet:
    """ca.crt; server.crt/key (serial 1001), server2.crt/key (serial 1002), client.crt/key,
    server-enc.crt/key (key encrypted with "secret"); other-ca.crt and intruder.crt/key, a
    client certificate the servers' CA did not sign."""
    d.mkdir(parents=True, exist_ok=True)
    _ca(d, "ca")
    _signed(d, "ca", "server", 1001, server=True)
    _signed(d, "ca", "server2", 1002, server=True)
    _signed(d, "ca", "server-enc", 1003, server=True, passphrase="secret")
    _signed(d, "ca", "client", 2001, server=False)
    _ca(d, "other-ca")
    _signed(d, "other-ca", "intruder", 3001, server=False)
    return CertSet(d)
