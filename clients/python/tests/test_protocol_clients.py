"""The minimal clients of proto/PROTOCOL.md (sections 13, 14 + 16, 18) still run, with the
committed generated module, against real hosts: this package changes nothing they rely on.
(The Swift ThirdPartyClientTests run the same blocks with a freshly generated module.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEADLINE, ROOT, System

pytestmark = pytest.mark.host
WIRE = ROOT / "clients" / "python" / "src" / "statebus" / "_wire"


def block(section: str) -> str:
    """The Python code block of a numbered section of PROTOCOL.md."""
    text = (ROOT / "proto" / "PROTOCOL.md").read_text()
    body = next(part for part in text.split("\n## ") if part.startswith(f"{section}. "))
    return body.split("```python\n", 1)[1].split("```", 1)[0]


def run_client(system: System, script: str) -> str:
    path = Path(system.folder) / "client.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=DEADLINE * 2,
                          env={**os.environ, "PYTHONPATH": str(WIRE)})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_section_13_client(system: System) -> None:
    host = system.host("--object", "SharedData", "--property", "sharedText:string=Hello")
    live = "while True:                                   # live"
    script = f'CONTROL = "{host.ready["control"]}"\nimport time\n' + block("13").replace(
        live, "end = time.time() + 3\nwhile time.time() < end:") + '\nprint("final", state["sharedText"].string_value, seq)\n'
    output = run_client(system, script)
    assert "final hi 1" in output and "accepted: true" in output


def test_section_18_client(system: System) -> None:
    host = system.host("--object", "SharedData", "--property", "sharedText:string=Hello",
                       "--property", 'profile:any={"name":"Ann"}')
    script = f'CONTROL = "{host.ready["control"]}"\n' + block("18") + (
        '\nprint("final", state[names.index("sharedText")].string_value, '
        'state[names.index("profile")].map_value.entries["name"].string_value, seq)\n')
    output = run_client(system, script)
    assert "write 1 accepted at 1" in output and "echo of write 1 at 1" in output
    assert "final hi Bo 1" in output and "schema kept" in output


def test_sections_14_and_16_clients(system: System) -> None:
    host = system.start("node", "profile", "--role", "host", "--control", system.endpoint("profile"),
                        "--database", f"{system.folder}/profile.sqlite", name="profile")
    output = run_client(system, f'CONTROL = "{host.ready["control"]}"\n{block("14")}\n{block("16")}')
    assert "actions ['loadUser/0', 'rename/1']" in output
    assert "ok anna " in output and "refused ERROR_CODE_ACTION_FAILED" in output and " py view " in output
