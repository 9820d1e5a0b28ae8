"""``volbench run recipe``: --list, a recipe alone, and --dry-run."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from volbench.cli.main import cli
from volbench.errors import UsageError
from volbench.fio.job_text import read_job
from volbench.recipes import loader

CLOUDS = {"AWS", "Azure", "Google Cloud", "Alibaba Cloud", "Tencent Cloud", "OCI"}


def test_list_shows_every_cloud() -> None:
    result = CliRunner().invoke(cli, ["run", "recipe", "--list"])
    assert result.exit_code == 0, result.output
    for cloud in CLOUDS:
        assert cloud in result.output
    document = json.loads(
        CliRunner().invoke(cli, ["run", "recipe", "--list", "--format", "json"]).output
    )
    clouds = {r["cloud"] for r in document["recipes"]}
    assert len(clouds) >= 6
    gcp = next(r for r in document["recipes"] if r["id"] == "gcp-pd-raw")
    assert gcp["pages"][0]["title"] == "Benchmarking persistent disk performance"


def test_a_recipe_alone_shows_its_page_and_commands() -> None:
    result = CliRunner().invoke(cli, ["run", "recipe", "aws-ebs-ssd"])
    assert result.exit_code == 0, result.output
    assert (
        "https://docs.aws.amazon.com/ebs/latest/userguide/benchmark_procedures.html"
        in result.output
    )
    assert "--ioengine=psync --name fio_test_file" in result.output
    refused = CliRunner().invoke(cli, ["run", "recipe", "aws-ebs-ssd", "--step", "random-read-16k"])
    assert isinstance(refused.exception, UsageError)
    assert "give --target PATH to run aws-ebs-ssd" in str(refused.exception)


def test_dry_run_prints_a_job_file_fio_reads_as_the_page_says(tmp_path: Path) -> None:
    args = ["run", "recipe", "oci-block-volume", "--dry-run", "--target", str(tmp_path / "dev")]
    result = CliRunner().invoke(cli, [*args, "--step", "iops-random-read"])
    assert result.exit_code == 0, result.output
    sections = {s.name: dict(s.options) for s in read_job(result.output)}
    assert sections["global"]["filename"] == str(tmp_path / "dev")
    assert sections["global"]["iodepth"] == "256"
    assert "; run it as: fio --eta-newline=1 --readonly THIS_FILE" in result.output
    document = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert [s["id"] for s in document["steps"]][:2] == [
        "iops-random-read",
        "iops-random-read-write",
    ]
    assert document["scaled"] is False


def test_dry_run_refuses_a_target_of_the_wrong_kind(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "recipe", "gcp-pd-raw", "--dry-run", "--target", str(tmp_path)]
    )
    assert isinstance(result.exception, UsageError)
    assert "is a folder" in str(result.exception)


def test_a_recipe_file_of_ones_own_is_listed_and_dry_run(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    text = (Path(loader.__file__).parent / "data" / "tencent-cbs.yaml").read_text()
    mine.write_text(text.replace("id: tencent-cbs", "id: my-cbs"), encoding="utf-8")
    listed = CliRunner().invoke(cli, ["run", "recipe", "--list", "--file", str(mine)])
    assert "my-cbs" in listed.output
    args = ["run", "recipe", "my-cbs", "--file", str(mine), "--dry-run", "--target", "/dev/vdz"]
    result = CliRunner().invoke(cli, [*args, "--step", "random-read-iops", "--scale", "1/60"])
    assert result.exit_code == 0, result.output
    assert options_of(result.output)["global"]["runtime"] == "10000ms"  # 600 s / 60
    assert "; a rehearsal: sizes and runtimes x 0.0166667" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("bs=4k,", "bs=4k, write_iops_log=/etc/cron.d/x,"))
    refused = CliRunner().invoke(cli, ["run", "recipe", "--list", "--file", str(bad)])
    assert isinstance(refused.exception, UsageError)
    assert "'write_iops_log' is not an fio option a recipe may set" in str(refused.exception)


def options_of(text: str) -> dict[str, dict[str, str | None]]:
    return {s.name: dict(s.options) for s in read_job(text)}


def test_a_folder_recipe_on_hosts_names_a_path_on_every_host() -> None:
    """On --hosts, a recipe of folders or several targets takes NAME=PATH, paths on every
    host (its jobs run on the files they name there); none, or a path of another host,
    is one line; --dry-run prints its job files on those paths, normalised."""
    args = ["run", "recipe", "azure-benchmark-a-disk", "--hosts", "lab://fs"]
    none = CliRunner().invoke(cli, args)
    assert isinstance(none.exception, UsageError)
    assert "give --target nocache=PATH --target readcache=PATH" in str(none.exception)
    other = CliRunner().invoke(cli, [*args, "--target", "nocache=lab://x:/mnt/a"])
    assert isinstance(other.exception, UsageError)
    assert "with --hosts, the path on every host" in str(other.exception)
    dry = [*args, "--target", "nocache=/mnt/vda//nc/.", "--target", "readcache=/mnt/vda/rc"]
    result = CliRunner().invoke(cli, [*dry, "--dry-run", "--scale", "0.001"])
    assert result.exit_code == 0, result.output
    assert "directory=/mnt/vda/nc\n" in result.output
    assert "directory=/mnt/vda/rc\n" in result.output
