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
import tempfile
from pathlib import Path

KEY_FILE = ".grader-key"
SIGNATURE = "signature"


def load_key(out: Path) -> bytes:
    """The output folder's key, made (readable by the grader's user only) on first use. Graders that
    start together on one OUT (shards, --gpus workers) agree on it: the key is written whole into a
    file of its own, then linked into place, which only one of them can do; the others read that one."""
    path = Path(out) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f"{KEY_FILE}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as handle:   # mkstemp: mode 0600
                handle.write(secrets.token_bytes(32).hex() + "\n")
            os.link(temporary, path)
        except FileExistsError:
            pass   # another grader linked its key first: that one is the key
        finally:
            os.unlink(temporary)
    key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    if len(key) < 32:
        raise ValueError(f"{path}: not a grader key")
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
