"""The committed protocol module matches proto/statebus.proto (tools/check_generated.py)."""

import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def test_generated_module_matches_the_proto() -> None:
    result = subprocess.run([sys.executable, str(TOOLS / "check_generated.py")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_runtime_reads_the_generated_module() -> None:
    from statebus._wire import pb

    request = pb.Request(protocol_version=2, request_id=3, write=pb.WriteRequest(object="SharedData", write_id=1))
    assert pb.Request.FromString(request.SerializeToString()) == request
