"""Where the store is: commands that only read never create one, and a store's
password never appears in a message (also when its URL is malformed).

The PostgreSQL URLs point at 127.0.0.1 port 1 (nothing listens there) or cannot be
parsed at all, so no server is needed: every error here comes before a login.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.cli.main import main
from volbench.errors import StoreError
from volbench.store import database
from volbench.store.repository import Store


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "location",
    [
        "{tmp}/typo/empty.db",  # a folder that does not exist
        "sqlite:///{tmp}/typo.db",
        "{tmp}/typo.db",
        "::::",  # not a URL: a relative file name
    ],
)
def test_opening_a_missing_store_to_read_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"^(no result store at|cannot open result store)"):
        Store.open(location.replace("{tmp}", str(tmp_path)), create=False)
    assert _listing(tmp_path) == []


def test_the_missing_default_store_is_not_created_to_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data" / "volbench"
    monkeypatch.delenv(database.ENV_VAR, raising=False)
    monkeypatch.setattr(database, "default_data_dir", lambda: data)
    with pytest.raises(StoreError, match=rf"^no result store at {data}/volbench.db \("):
        Store.open(None, create=False)
    assert _listing(tmp_path) == []
    with Store.open(None) as store:  # a run creates it, folder and all
        assert store.list_runs() == []
    assert (data / "volbench.db").is_file()


def test_an_empty_file_is_no_store_to_read(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match=f"^{empty} holds no volbench results"):
        Store.open(str(empty), create=False)
    assert empty.stat().st_size == 0  # no tables were made in it


def test_an_existing_store_opens_to_read(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    Store.open(path).close()
    with Store.open(path, create=False) as store:
        assert store.list_runs() == []


READ_ONLY = [
    ("runs",),
    ("show", "latest"),
    ("export", "latest"),
    ("label", "1", "a=b"),
    ("delete", "1", "--yes"),
    ("check", "latest"),
    ("report", "1", "-o", "{tmp}/page.html"),
    ("compare", "1", "2"),
    ("pts-report", "latest"),
    ("fingerprint", "1"),
    ("qos", "fit", "1"),
]


@pytest.mark.parametrize(
    "args", READ_ONLY, ids=lambda a: a[0] + ("-" + a[1] if a[0] == "qos" else "")
)
@pytest.mark.parametrize("db", ["sqlite:///{tmp}/typo.db", "::::"])
def test_read_only_commands_on_a_missing_store_say_so_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    db: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = _main(monkeypatch, capsys, *argv, "--db", db.replace("{tmp}", str(tmp_path)))
    assert (code, out) == (2, "")
    assert err.startswith("volbench: error: no result store at ") and err.count("\n") == 1, err
    assert "(a run creates it; check --db or VOLBENCH_DB)" in err
    assert _listing(tmp_path) == []


def _main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    """The real command in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr("sys.argv", ["volbench", *argv])
    with pytest.raises(SystemExit) as ended:
        main()
    captured = capsys.readouterr()
    return int(ended.value.code or 0), captured.out, captured.err


PASSWORD = "pa/ss"

MALFORMED = [
    "postgresql://u:pa/ss@[::1:5432/vb",  # an unescaped / and an unclosed [
    "postgresql://u:pa/ss@127.0.0.1:1/vb",
    "postgresql://u:pa/ss@127.0.0.1:x/vb",  # a port that is no number
    "postgresql://u:pa/ss@ss@127.0.0.1:1/vb",  # an unescaped @
    "postgresql://u:pa/ss:x@127.0.0.1:1/vb",
    "postgresql://u@127.0.0.1:1/vb?password=pa/ss",
    "postgresql://u@127.0.0.1:1/vb?sslmode=bogus&password=pa/ss",
    "postgresql://u:pa%2Fss@127.0.0.1:1/vb",  # escaped: pa/ss once decoded
    "postgresql+asyncpg://u:pa/ss@h/vb",
    "mysql://u:pa/ss@h/vb",
    "postgresql://u:pa/ss@127.0.0.1:1/vb?connect_timeout=x",
    "postgresql://u:pa/ss@/vb?host=/nonexistent-socket-dir",
]


@pytest.mark.parametrize("url", MALFORMED)
def test_no_message_shows_the_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    with pytest.raises(StoreError) as error:
        Store.open(url)
    assert PASSWORD not in str(error.value) and "pa%2Fss" not in str(error.value)
    assert "***" in str(error.value)
    for args in (("runs", "--db", url), ("show", "latest", "--db", url)):
        code, out, err = _main(monkeypatch, capsys, *args)
        assert code == 2
        assert PASSWORD not in out + err and "pa%2Fss" not in out + err, err
    monkeypatch.setenv(database.ENV_VAR, url)
    code, out, err = _main(monkeypatch, capsys, "runs")
    assert code == 2 and PASSWORD not in out + err, err


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:S3cr@t@127.0.0.1/vb",
        "postgresql://u:S3cr@t@127.0.0.1:1/vb?password=S3cr@t",
        "postgresql://u:S3cr@t@t@127.0.0.1/vb",
    ],
)
def test_an_unencoded_at_in_the_password_shows_no_part_of_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    """Regression (issue 22): "failed to resolve host 'PW@127.0.0.1'" showed its tail."""
    code, out, err = _main(monkeypatch, capsys, "runs", "--db", url)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "S3cr" not in err and "t@" not in err and "@t" not in err, err
    assert "holds an '@': write it as %40" in err


def test_the_store_named_in_output_has_no_password() -> None:
    url = database.resolve_url("postgresql://u:pa/ss@h:5/vb?password=pa/ss&sslmode=disable")
    shown = database.display_url(url)
    assert PASSWORD not in shown and "pa%2Fss" not in shown
    assert shown.startswith("postgresql://u:***@h:5/vb?") and "sslmode=disable" in shown


def test_redaction_keeps_messages_without_passwords() -> None:
    assert database.redact("connection refused", "postgresql://u@h/vb") == "connection refused"
    assert database.redact("x pa/ss y", "postgresql://u:pa/ss@h/vb") == "x *** y"


NOT_LOCATIONS = [
    "host=127.0.0.1 port=1 user=u password=S3cret dbname=vb",  # libpq's keyword string
    "password=S3cret",
    "  dbname = vb   password = 'S3cret with blanks'",
    "host=h password=S3cret://x dbname=vb",  # a '://' inside a value
    "dbname=vb user=u password=S3cret:x@h",
    "/srv/store password=S3cret",
    "postgresql:/u:S3cret@127.0.0.1:1/vb",  # a URL without its '//'
    "postgresql:u:S3cret@127.0.0.1/vb",
    "u:S3cret@127.0.0.1/vb",  # without its scheme
]


@pytest.mark.parametrize("location", NOT_LOCATIONS)
def test_a_libpq_keyword_string_is_refused_without_showing_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    location: str,
) -> None:
    """Regression (issue 31, item 5): `--db "host=... password=S dbname=..."` was a SQLite
    path: the error printed the password and `import` made a file named after it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="not shown") as error:
        Store.open(location)
    assert "S3cret" not in str(error.value)
    fio_output = str(FIO_FIXTURES / "randread_json.json")
    for args in (("runs", "--db", location), ("import", fio_output, "--db", location)):
        code, out, err = _main(monkeypatch, capsys, *args)
        assert (code, out) == (2, "") and err.count("\n") == 1, err
        assert "S3cret" not in err and "postgresql://USER:PASSWORD@HOST:PORT/DB" in err, err
    monkeypatch.setenv(database.ENV_VAR, location)
    code, out, err = _main(monkeypatch, capsys, "import", fio_output)
    assert code == 2 and "S3cret" not in out + err and "not shown" in err, err
    assert _listing(tmp_path) == []  # no file named after it


def test_a_path_holding_equals_signs_is_still_a_path(tmp_path: Path) -> None:
    for path in (tmp_path / "a=b.db", tmp_path / "x y" / "c=d.db"):
        path.parent.mkdir(exist_ok=True)
        Store.open(str(path)).close()
        assert path.is_file()
    Store.open(f"sqlite:///{tmp_path}/run 2 id=1.db").close()  # the way for any name
    assert (tmp_path / "run 2 id=1.db").is_file()
