"""ember.hub against torch.hub, offline: hubconf.py entry points from a local directory and from a cached
GitHub checkout, the hub directory, and load_state_dict_from_url reading (or downloading into) its cache."""

import hashlib
import io
import os
import sys
import textwrap

import pytest
import torch
from compare import normalize_message

import ember

HUBCONF = textwrap.dedent('''
    dependencies = ["numpy"]
    import helper_module_for_hub_test as helper


    def tiny(width=3, *, name="tiny"):
        """A tiny entry point."""
        return {"width": width, "name": name, "helper": helper.VALUE}


    def _private():
        return 1


    NOT_CALLABLE = 3
''')


@pytest.fixture
def hub_dirs(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    (repo / "helper_module_for_hub_test.py").write_text("VALUE = 42\n")
    hub = tmp_path / "hub"
    cached = hub / "someone_models_main"
    cached.mkdir(parents=True)
    for f in ("hubconf.py", "helper_module_for_hub_test.py"):
        (cached / f).write_text((repo / f).read_text())
    old = torch.hub.get_dir(), ember.hub.get_dir()
    torch.hub.set_dir(str(hub))
    ember.hub.set_dir(str(hub))
    yield repo, hub
    torch.hub.set_dir(old[0])
    ember.hub.set_dir(old[1])
    sys.modules.pop("helper_module_for_hub_test", None)


def _same(fn, capsys):
    outcomes = []
    for lib in (torch, ember):
        sys.modules.pop("helper_module_for_hub_test", None)
        try:
            r = ("ok", fn(lib))
        except Exception as err:  # noqa: BLE001 - compared below
            r = (type(err).__name__, normalize_message(str(err)))
        outcomes.append((r, capsys.readouterr()))
    assert outcomes[1] == outcomes[0]
    return outcomes[0][0]


CALLS = [
    lambda lib, repo: lib.hub.load(str(repo), "tiny", source="local"),
    lambda lib, repo: lib.hub.load(str(repo), "tiny", 5, source="LOCAL", name="x"),
    lambda lib, repo: lib.hub.load(str(repo), "_missing", source="local"),
    lambda lib, repo: lib.hub.load(str(repo), "NOT_CALLABLE", source="local"),
    lambda lib, repo: lib.hub.load(str(repo), 3, source="local"),
    lambda lib, repo: lib.hub.load(str(repo), "tiny", source="svn"),
    lambda lib, repo: lib.hub.load("someone/models:main", "tiny", trust_repo=True),
    lambda lib, repo: lib.hub.load("someone/models:main", "tiny", width=1, trust_repo="check", verbose=False),
    lambda lib, repo: lib.hub.list("someone/models:main", trust_repo=True),
    lambda lib, repo: lib.hub.help("someone/models:main", "tiny", trust_repo=True),
    lambda lib, repo: sorted(os.listdir(lib.hub.get_dir())),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_hub_entry_points(i, hub_dirs, capsys):
    repo, _ = hub_dirs
    _same(lambda lib: CALLS[i](lib, repo), capsys)


def test_missing_dependency(hub_dirs, capsys):
    repo, _ = hub_dirs
    (repo / "hubconf.py").write_text('dependencies = ["no_such_package_xyz"]\n\ndef f():\n    return 1\n')
    assert _same(lambda lib: lib.hub.load(str(repo), "f", source="local"), capsys)[0] == "RuntimeError"


def test_get_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    old = torch.hub._hub_dir, ember.hub._hub_dir
    torch.hub._hub_dir = ember.hub._hub_dir = None
    try:
        assert ember.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "th" / "hub")
        monkeypatch.delenv("TORCH_HOME")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert ember.hub.get_dir() == torch.hub.get_dir()
    finally:
        torch.hub._hub_dir, ember.hub._hub_dir = old


def _checkpoint_bytes():
    buf = io.BytesIO()
    torch.save({"weight": torch.arange(6.0).reshape(2, 3), "step": 7}, buf)
    return buf.getvalue()


def _state(lib, url, **kw):
    sd = lib.hub.load_state_dict_from_url(url, **kw)
    return {k: (v.tolist() if isinstance(v, lib.Tensor) else v) for k, v in sd.items()}


def test_load_state_dict_from_cache(hub_dirs, capsys):
    _, hub = hub_dirs
    (hub / "checkpoints").mkdir()
    (hub / "checkpoints" / "model-abc123.pt").write_bytes(_checkpoint_bytes())
    url = "https://example.invalid/weights/model-abc123.pt"
    r = _same(lambda lib: _state(lib, url, check_hash=True), capsys)
    assert r[0] == "ok" and r[1]["step"] == 7
    _same(lambda lib: _state(lib, url, weights_only=True, map_location="cpu"), capsys)


@pytest.mark.parametrize("good_hash", [True, False])
def test_load_state_dict_downloads_into_cache(hub_dirs, tmp_path, capsys, good_hash):
    _, hub = hub_dirs
    data = _checkpoint_bytes()
    digest = hashlib.sha256(data).hexdigest()[:8] if good_hash else "00000000"
    outcomes = []
    for lib in (torch, ember):
        src = tmp_path / lib.__name__ / f"net-{digest}.pth"
        src.parent.mkdir()
        src.write_bytes(data)
        try:
            r = ("ok", _state(lib, src.as_uri(), check_hash=True, progress=False))
        except RuntimeError as err:
            r = ("RuntimeError", str(err))
        cached = os.path.exists(hub / "checkpoints" / f"net-{digest}.pth")
        outcomes.append((r, cached, capsys.readouterr().out.replace(lib.__name__, "LIB")))
        for f in os.listdir(hub / "checkpoints"):
            os.remove(hub / "checkpoints" / f)
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][1] is good_hash


def test_download_without_a_network_fails_as_torch(hub_dirs, capsys):
    _same(lambda lib: _state(lib, "http://127.0.0.1:9/nothing-here.pt"), capsys)


def test_download_url_to_file(tmp_path, capsys):
    src = tmp_path / "src.bin"
    src.write_bytes(b"x" * 300000)
    for lib in (torch, ember):
        dst = tmp_path / f"{lib.__name__}.bin"
        lib.hub.download_url_to_file(src.as_uri(), str(dst), progress=False)
        assert dst.read_bytes() == src.read_bytes()
    _same(lambda lib: lib.hub.download_url_to_file(src.as_uri(), str(tmp_path / "bad"), hash_prefix="ffff",
                                                   progress=False), capsys)
    assert not os.path.exists(tmp_path / "bad")
