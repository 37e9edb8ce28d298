"""A config that is not valid YAML (a --config file, or a registered task's own YAML) is one line naming the file
and the line, exit status 2, for every command that reads one."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.tasks import get_task
from normbench.tasks.registry import _REGISTRY, Task

BAD = "trainer:\n  max_steps: 6\nmodel: {class_path: x\ndata: 1\n"


@pytest.mark.parametrize("command", ["fit", "sweep"])
def test_a_config_file_with_a_syntax_error_is_one_line(tmp_path: Path, command: str, normbench_in_process) -> None:  # noqa: ANN001
    (tmp_path / "bad.yaml").write_text(BAD)
    out = normbench_in_process(command, "--config", "bad.yaml", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("normbench: error: config: bad.yaml:4:5: not valid YAML ("), line


@pytest.mark.parametrize("content", [BAD, "- a list\n- not sections\n", b"model: \xff\n"])
def test_a_tasks_broken_yaml_is_one_line_for_leaderboard_and_bench(
    tmp_path: Path, content: str | bytes, monkeypatch: pytest.MonkeyPatch, normbench_in_process
) -> None:  # noqa: ANN001
    path = tmp_path / "broken.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    majority = get_task("majority")
    monkeypatch.setitem(_REGISTRY.entries, "broken", Task("broken", majority.module, majority.datamodule, config=path))
    for args in (("leaderboard", "broken"), ("bench", "broken")):
        out = normbench_in_process(*args, cwd=tmp_path)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
        (line,) = out.stderr.strip().splitlines()
        assert line.startswith(f"normbench: error: config: {path}"), line
