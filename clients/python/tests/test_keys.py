"""Key files as `statebus keygen` writes them (the Swift CurveKeyFile's rules)."""

import os
from pathlib import Path

import pytest
import zmq

import statebus
from statebus.keys import load_public_key, load_secret_key


def keygen(folder: Path, name: str) -> tuple[bytes, bytes]:
    """Writes NAME.key and NAME.pub in keygen's format; returns (public, secret)."""
    public, secret = zmq.curve_keypair()
    key = folder / f"{name}.key"
    key.write_text(f"# StateBus CURVE secret key '{name}': keep it private (mode 0600)\n# public key: {public.decode()}\n{secret.decode()}\n")
    key.chmod(0o600)
    (folder / f"{name}.pub").write_text(f"# StateBus CURVE public key '{name}'\n{public.decode()}\n")
    return public, secret


def test_reads_keygen_files(tmp_path: Path) -> None:
    public, secret = keygen(tmp_path, "view")
    assert load_secret_key(tmp_path / "view.key") == (public, secret)
    assert load_public_key(tmp_path / "view.pub") == public
    assert load_public_key(tmp_path / "view.key") == public  # the public half of a secret key
    assert load_public_key(public.decode()) == public  # the key itself
    keys = statebus.Keys.from_files(tmp_path / "view.key", tmp_path / "view.pub")
    assert (keys.public, keys.secret, keys.host_public) == (public, secret, public)


def test_comments_and_blank_lines_before_the_key(tmp_path: Path) -> None:
    public, _ = zmq.curve_keypair()
    (tmp_path / "h.pub").write_text(f"# comment\n\n   {public.decode()}  \n")
    assert load_public_key(tmp_path / "h.pub") == public


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_secret_key_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    keygen(tmp_path, "view")
    os.chmod(tmp_path / "view.key", mode)
    with pytest.raises(statebus.KeyFileError, match="chmod 600"):
        load_secret_key(tmp_path / "view.key")


def test_unusable_files(tmp_path: Path) -> None:
    with pytest.raises(statebus.KeyFileError, match="cannot read"):
        load_secret_key(tmp_path / "missing.key")
    with pytest.raises(statebus.KeyFileError, match="not a 40-character"):
        load_public_key("not-a-key")
    (tmp_path / "empty.pub").write_text("# only a comment\n")
    with pytest.raises(statebus.KeyFileError, match="holds no key"):
        load_public_key(tmp_path / "empty.pub")


def test_key_and_host_key_go_together() -> None:
    with pytest.raises(ValueError, match="go together"):
        statebus.connect("ipc:///nowhere", object="X", key="view.key")


def test_forty_characters_outside_z85_are_no_key() -> None:
    with pytest.raises(statebus.KeyFileError):
        load_public_key("~" * 40)
