#!/usr/bin/env python3
"""Re-check every KAT vector in this folder against an independent implementation.

SHA-3/SHAKE with Python's hashlib, AES with the 'cryptography' package (pip install cryptography).
Exits non-zero on the first mismatch or malformed line. Run: python3 verify.py
"""
import hashlib
import pathlib
import re
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

HERE = pathlib.Path(__file__).resolve().parent
ID = re.compile(r"^[A-Za-z0-9_./-]+$")


def unhex(v):
    """Hex with the optional '<hex>*<n>' repetition used by sha3.txt."""
    if "*" in v:
        h, n = v.split("*")
        return bytes.fromhex(h) * int(n)
    return bytes.fromhex(v)


def fields(parts, names):
    kv = dict(p.split("=", 1) for p in parts)
    if sorted(kv) != sorted(names):
        raise ValueError(f"expected fields {names}, got {sorted(kv)}")
    return [unhex(kv[n]) for n in names]


def lines(name):
    for no, line in enumerate((HERE / name).read_text().splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            yield f"{name}:{no}", line.split(" ")


def main():
    seen, count = set(), 0
    for where, p in lines("sha3.txt"):
        vid, alg = p[0], p[1]
        msg, out = fields(p[2:], ["msg", "out"])
        if alg.startswith("SHA3-"):
            got = hashlib.new("sha3_" + alg[5:], msg).digest()
        elif alg in ("SHAKE128", "SHAKE256"):
            got = hashlib.new("shake_" + alg[5:], msg).digest(len(out))
        else:
            sys.exit(f"{where}: unknown alg {alg}")
        check(where, vid, seen, got, out)
        count += 1
    for where, p in lines("aes.txt"):
        vid, alg, op = p[0], p[1], p[2]
        key, inp, out = fields(p[3:], ["key", "in", "out"])
        if alg != f"AES-{len(key) * 8}" or len(inp) != 16 or len(out) != 16:
            sys.exit(f"{where}: {alg} with a {len(key)}-byte key or bad block size")
        c = Cipher(algorithms.AES(key), modes.ECB())
        ctx = c.encryptor() if op == "encrypt" else c.decryptor() if op == "decrypt" else None
        if ctx is None:
            sys.exit(f"{where}: unknown op {op}")
        check(where, vid, seen, ctx.update(inp) + ctx.finalize(), out)
        count += 1
    print(f"{count} vectors verified")


def check(where, vid, seen, got, out):
    if not ID.match(vid) or vid in seen:
        sys.exit(f"{where}: bad or duplicate id {vid}")
    seen.add(vid)
    if got != out:
        sys.exit(f"{where}: {vid}: expected {out.hex()}, independent implementation gives {got.hex()}")


if __name__ == "__main__":
    main()
