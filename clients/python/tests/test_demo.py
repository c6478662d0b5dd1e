"""``python -m statebus.demo shared-text``, the demo's Python view, against the demo's own
Swift host (``statebus node shared-text --role host``): it shows the host's text, sets it
from its input, renders other views' edits, and refuses to start without a host."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import DEADLINE, Node, System

pytestmark = pytest.mark.host


def python_view(system: System, control: str, name: str = "py") -> Node:
    view = Node([sys.executable, "-m", "statebus.demo", "shared-text", "--control", control, "--name", name], name, takes_input=True)
    system.nodes.append(view)  # stopped with the rest, however the test ends
    return view


def test_shows_edits_and_sets_the_text(system: System) -> None:
    control = system.endpoint("text")
    system.start("node", "shared-text", "--role", "host", "--control", control, name="host")
    view = python_view(system, control)
    view.wait_for_line("[py] py view: Hello from the host")

    view.send("typed in python")
    view.wait_for_line("[py] py view: typed in python")
    assert system.run("get", "--control", control, "--object", "SharedData", "sharedText") == ['"typed in python"']

    system.run("set", "--control", control, "--object", "SharedData", "sharedText", "set by the CLI", "--string")
    view.wait_for_line("[py] py view: set by the CLI")

    # A line typed just before the input ends is still written and answered before the view closes.
    view.send("the last line")
    view.close_input()
    view.wait_for_line("[py] closed")
    assert view.process.wait(DEADLINE) == 0
    assert not [line for line in view.lines if "refused" in line], view.lines
    assert system.run("get", "--control", control, "--object", "SharedData", "sharedText") == ['"the last line"']


def test_without_a_host_it_says_what_to_give() -> None:
    done = subprocess.run([sys.executable, "-m", "statebus.demo", "shared-text"], capture_output=True, text=True,
                          timeout=DEADLINE, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "no host to join: give --control ENDPOINT, or run under statebus launch" in done.stderr
