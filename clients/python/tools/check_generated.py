#!/usr/bin/env python3
"""Fails when the Python client's generated protocol module no longer matches the .proto.

Two checks, like ``proto/check.sh`` does for the Swift code:

1. the checksum recorded beside ``src/statebus/_wire/statebus_pb2.py`` is that of
   ``proto/statebus.proto`` (needs nothing but Python);
2. when ``protoc`` is installed, the descriptor embedded in the committed module equals the
   one ``protoc`` makes from the ``.proto`` now (catches a hand-edited module, or one
   generated from another file).

Fix either with ``clients/python/tools/generate.sh`` and commit the result. Exit status 0
when both hold (the second is skipped, and says so, without protoc), 1 otherwise.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROTO = ROOT / "proto" / "statebus.proto"
WIRE = ROOT / "clients" / "python" / "src" / "statebus" / "_wire"


def problems() -> list[str]:
    """What is wrong, one sentence each; empty when the module is current."""
    found: list[str] = []
    recorded = (WIRE / "statebus.proto.sha256").read_text().strip()
    actual = hashlib.sha256(PROTO.read_bytes()).hexdigest()
    if recorded != actual:
        found.append(
            f"proto/statebus.proto changed (sha256 {actual}) but {WIRE.relative_to(ROOT)}/statebus_pb2.py "
            f"was made from {recorded}"
        )
    protoc = shutil.which("protoc")
    if protoc is None:
        print("check_generated: protoc not installed; only the checksum was compared", file=sys.stderr)
        return found
    from google.protobuf import descriptor_pb2

    spec = importlib.util.spec_from_file_location("_statebus_pb2_check", WIRE / "statebus_pb2.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "statebus.desc"
        subprocess.run([protoc, f"--descriptor_set_out={out}", "-I", str(PROTO.parent), PROTO.name], check=True)
        fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    # protoc fills in json_name in a descriptor set, never in the descriptor it embeds.
    for descriptor in (committed, fresh):
        for message in _messages(descriptor.message_type):
            for field in message.field:
                field.ClearField("json_name")
    if committed != fresh:
        found.append(f"{WIRE.relative_to(ROOT)}/statebus_pb2.py does not describe proto/statebus.proto as protoc reads it now")
    return found


def _messages(messages):  # type: ignore[no-untyped-def]
    """Every message descriptor, nested ones included."""
    for message in messages:
        yield message
        yield from _messages(message.nested_type)


def main() -> int:
    found = problems()
    for problem in found:
        print(f"check_generated: {problem}", file=sys.stderr)
    if found:
        print("check_generated: run clients/python/tools/generate.sh and commit the result", file=sys.stderr)
        return 1
    print("check_generated: the Python protocol module matches proto/statebus.proto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
