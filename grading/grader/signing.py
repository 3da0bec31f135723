"""Records only the grader writes: an HMAC over every student record, keyed by a secret that
lives in the output folder, which no sandbox can see.

A record whose signature is missing or wrong (written by student code in an unsandboxed run, or
by hand) is not believed: a rerun grades that student again, and the class outputs leave it out.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

KEY_FILE = ".grader-key"
SIGNATURE = "signature"


def load_key(out: Path) -> bytes:
    """The output folder's key, made (readable by the grader's user only) on first use."""
    path = Path(out) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
        if len(key) < 32:
            raise ValueError(f"{path}: not a grader key")
        return key
    key = secrets.token_bytes(32)
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(key.hex() + "\n")
    return key


def _digest(key: bytes, data: dict) -> str:
    body = {k: v for k, v in data.items() if k != SIGNATURE}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, text.encode("ascii"), hashlib.sha256).hexdigest()


def sign(key: bytes, data: dict) -> dict:
    return {**{k: v for k, v in data.items() if k != SIGNATURE}, SIGNATURE: _digest(key, data)}


def verify(key: bytes, data: dict) -> bool:
    claimed = data.get(SIGNATURE)
    return isinstance(claimed, str) and hmac.compare_digest(claimed, _digest(key, data))
