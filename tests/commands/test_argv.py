"""A command line's words before its parser reads them: the switches of every command, in each of their forms."""

from __future__ import annotations

import pytest


def test_dry_run_and_verbose_take_every_form_of_a_switch() -> None:
    from normbench.commands.argv import take_switch

    assert take_switch(["bake", "--dry_run"], "--dry_run") == (["bake"], True)
    assert take_switch(["bake", "--dry_run", "true", "--budget", "5"], "--dry_run") == (["bake", "--budget", "5"], True)
    assert take_switch(["bake", "--dry_run=false"], "--dry_run") == (["bake"], False)
    assert take_switch(["bake"], "--dry_run") == (["bake"], None)
    with pytest.raises(ValueError, match="dry_run: must be true or false, got 'yes'"):
        take_switch(["bake", "--dry_run=yes"], "--dry_run")


@pytest.mark.parametrize("argv", [["bake", "--dry_run=yes"], ["bake", "--trust_record_code=maybe"]])
def test_a_switch_with_another_value_is_one_line_and_status_2(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    from normbench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2
    assert err.startswith("normbench: error: ") and "must be true or false" in err and "\n" not in err
