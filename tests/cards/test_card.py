"""Report cards: each task's protocol, the card's variant, its verdicts built from boards, broken norms, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from normbench.archive.board import dumps_board
from normbench.archive.board_keys import board_folder, card_key
from normbench.boards.build import build
from normbench.cards.build import build_card, card_claims, task_card
from normbench.cards.make import make_card, parse_placements, parse_tasks, plan_card
from normbench.cards.probe import inputs as probe_inputs
from normbench.cards.probe import probe
from normbench.cards.protocol import CardProtocol, NamedCard, card_variant, probed_component, slug, tasks_with_cards
from normbench.cards.render import render_card
from normbench.cards.summary import summary_table
from normbench.judge import tuned as tuned_view
from normbench.judge.claims import check_claim
from normbench.judge.verdicts.qualify import margin_registration
from normbench.nn.norms import Norm
from normbench.sweep.options import BakeOptions
from normbench.tasks.series import expand_metric_layers
from normbench.training.config import load_config
from tests.factories import make_record

PNORM = "examples.pnorm_example:PNorm"


class Scale(Norm):
    """A plug-in whose name is also a variant's (pre/scale): N(x) = x / rms(x)."""

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * x.pow(2).mean(dim=-1, keepdim=True).rsqrt()


def at(tmp_path: Path, **fields: Any) -> BakeOptions:
    """A card's bake options with its results (and beside them its queue) and runs under ``tmp_path``."""
    return BakeOptions(results_dir=str(tmp_path / "results"), runs_dir=str(tmp_path / "runs"), **fields)


@pytest.mark.parametrize("task", tasks_with_cards())
def test_every_task_declares_a_card_its_boards_can_judge(task: str) -> None:
    protocol = CardProtocol.of(task)
    bench = load_config(task, protocol.preset)["bench"]
    assert {protocol.layernorm, protocol.rmsnorm} <= set(bench["variants"])
    metrics = set(expand_metric_layers(bench["metrics"], 4))
    assert set(protocol.metrics) | set(protocol.thresholds) <= metrics
    post = protocol.at("post")  # --placements pre,post: the same claims against the post-LN baselines
    assert (post.layernorm, post.rmsnorm, post.grid) == ("post/both", "post/scale-blocks", None)
    claims = card_claims(protocol, f"pre/{slug(PNORM)}") + card_claims(post, f"post/{slug(PNORM)}")
    assert all(c["id"].startswith(f"normbench.card.{task}.post.") for c in claims[len(claims) // 2 :])
    for claim in claims:
        check_claim(dict(claim))
        if claim["rule"]["kind"] == "equivalence":  # declared before any card ran
            registered = margin_registration(claim["id"], claim["rule"]["margin"])
            assert registered and registered["declared"] == "before the runs", claim["id"]


def test_the_cards_variant_replaces_every_block_norms_component_and_keeps_the_rest() -> None:
    name, lm = card_variant(PNORM, CardProtocol.of("lm"))
    assert name == "pre/pnorm"
    attn = yaml.safe_load(lm["model.init_args.arch.attn_norm"])
    assert attn == {"component": PNORM, "affine": False, "eps": 1e-5}  # the LayerNorm baseline's frozen affine kept
    assert lm["model.init_args.arch.ffn_norm.component"] == PNORM and lm["model.init_args.arch.qkv_bias"] == "false"
    name, majority = card_variant(PNORM, CardProtocol.of("majority"))
    assert majority == {
        "model.init_args.arch.attn_norm.component": PNORM,
        "model.init_args.arch.ffn_norm.component": PNORM,
    }
    assert card_variant("dyt", CardProtocol.of("majority")) == ("pre/dyt", None)  # the published variant itself
    # a plug-in whose class name is a variant's gets a variant of its own, never the baseline's runs
    assert card_variant("tests.cards.test_card:Scale", CardProtocol.of("majority"))[0] == "pre/scale-card"
    with pytest.raises(ValueError, match=r"^component: cannot import 'no.such:Norm'"):
        card_variant("no.such:Norm", CardProtocol.of("majority"))


def test_a_named_card_is_the_variant_each_task_names_and_probes_its_norm() -> None:
    assert card_variant("peri", CardProtocol.of("majority")) == ("peri/both", None)
    assert card_variant("dyt", CardProtocol.of("lm")) == ("pre/dyt_recipe", None)  # DyT as its recipe chose on the LM
    assert card_variant("qknorm", CardProtocol.of("sst2")) == ("pre/both+qknorm", None)
    name, derived = card_variant("dyt", CardProtocol.of("sst2"))  # SST-2 names no DyT: its block norms replaced
    assert name == "pre/dyt" and derived is not None and derived["model.init_args.arch.ffn_norm.component"] == "dyt"
    assert [probed_component(n) for n in ("qknorm", "peri", "dyt", PNORM)] == ["scale", "both", "dyt", PNORM]
    with pytest.raises(ValueError, match=r"^bench.card.named.x.variant: 'pre/nope' is not a variant of task majority$"):
        NamedCard.of("majority", "x", {"variant": "pre/nope"})
    with pytest.raises(ValueError, match=r"^norm: 'peri2' is not allowed; .*; or a named card: dyt, peri, qknorm"):
        probed_component("peri2")


def test_a_card_at_post_adds_the_post_ln_variant_beside_the_published_post_ln_baselines(tmp_path: Path) -> None:
    _, items = plan_card(PNORM, ["majority"], tmp_path / "results", placements=["pre", "post"])
    pre, post, grid, tuned = items  # the headline runs at each placement; the grid and tuned rates at pre only
    assert post["board"] == "cards/pnorm/majority/post" and post["variants"] == [
        "post/both",
        "post/scale-blocks",
        "post/pnorm",
    ]
    assert (grid["board"], tuned["board"]) == ("cards/pnorm/majority/lr", "cards/pnorm/majority/tuned")
    defined = load_config(post["config"], "quick-10")["bench"]["variants"]["post/pnorm"]
    assert defined["model.init_args.arch.placement"] == "post"
    assert defined["model.init_args.arch.ffn_norm.component"] == PNORM
    assert parse_placements("post,pre") == ["pre", "post"]
    with pytest.raises(ValueError, match=r"^placements: 'post' is not a card placement list; give pre"):
        parse_placements("post")
    with pytest.raises(ValueError, match=r"^placements: 'peri' is not a card placement list"):
        parse_placements("pre,peri")
    with pytest.raises(ValueError, match=r"^placements: peri is a named card, trained as its own variant only"):
        card_variant("peri", CardProtocol.of("majority").at("post"))


def test_a_registered_norm_reuses_a_tasks_variant_only_where_it_is_the_cards_variant() -> None:
    for task in ("majority", "lm", "sst2"):  # pre/scale is RMSNorm in attention only; pre/scale-blocks in both slots
        protocol = CardProtocol.of(task)
        assert card_variant("scale", protocol) == ("pre/scale-blocks", None) == (protocol.rmsnorm, None)
        assert card_variant("scale", protocol.at("post")) == ("post/scale-blocks", None)
        assert card_variant("project", protocol) == ("pre/project-blocks", None)
    name, definition = card_variant("tests.cards.test_card:Scale", CardProtocol.of("majority"))
    assert name == "pre/scale-card" and definition["model.init_args.arch.ffn_norm.component"].endswith(":Scale")


def test_a_card_folder_of_another_norm_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "cards" / "scale"  # the folder of tests.cards.test_card:Scale's card, and of scale's
    folder.mkdir(parents=True)
    (folder / "card.json").write_text('{"norm": "scale", "tasks": []}')
    with pytest.raises(
        ValueError, match=r"^norm: .*card.json is the card of scale, not of tests.cards.test_card:Scale"
    ):
        make_card("tests.cards.test_card:Scale", "majority", BakeOptions(results_dir=str(tmp_path)), dry_run=True)


def test_the_card_plan_adds_its_variant_to_the_tasks_config(tmp_path: Path) -> None:
    queue, items = plan_card(PNORM, ["majority"], tmp_path / "results")
    assert queue == tmp_path / "queues" / "cards" / "pnorm" / "bake.yaml"  # an input, outside the results
    item, grid, tuned = items  # the headline runs, then the learning-rate grid, then the runs at the tuned rates
    assert item["board"] == "cards/pnorm/majority" and item["variants"] == ["pre/both", "pre/scale-blocks", "pre/pnorm"]
    config = load_config(item["config"], "quick-10")
    assert config["task"] == "majority" and "pre/pnorm" in config["bench"]["variants"]
    assert config["bench"]["claims"] is None  # the preset's own claims compare the task's variants: the card judges
    assert (grid["board"], grid["preset"], grid["seeds"]) == ("cards/pnorm/majority/lr", "lr", "100,101")
    assert (tuned["board"], tuned["preset"], tuned["variants"]) == (
        "cards/pnorm/majority/tuned",
        "tuned",
        item["variants"],
    )
    spec = load_config(tuned["config"], "tuned")["bench"]["tuned"]
    assert spec == {"choice": "cards/pnorm/majority/lr", "shared": 1e-3}  # its norm's rate chosen on its own grid
    assert load_config(tuned["config"], "tuned")["bench"]["protocol"]["notes"] == [  # its own board's, not the task's
        "The card's judging seeds 0-9 in the protocol of results/cards/pnorm/majority/, every variant at the learning "
        "rate all share (0.001; these are the runs of results/cards/pnorm/majority/) and at its own rate, chosen on "
        "results/cards/pnorm/majority/lr/ (tuning seeds 100, 101). Every claim is judged at both."
    ]
    assert load_config(tuned["config"], "tuned")["bench"]["protocol"]["settings"]  # the task's table stays
    assert yaml.safe_load(queue.read_text())["queue"] == items
    _, (sst2, *_) = plan_card(PNORM, ["sst2"], tmp_path / "results")
    assert load_config(sst2["config"], "quick")["bench"].get("token_report") is None  # Tables 3-4 read other models
    assert parse_tasks("lm,majority") == ["majority", "lm"]
    with pytest.raises(ValueError, match=r"^tasks: 'cifar' is not a card task"):
        parse_tasks("majority,cifar")


def test_a_card_planned_again_keeps_its_declared_superseded_runs(tmp_path: Path) -> None:
    plan_card(PNORM, ["majority"], tmp_path / "results")
    config = tmp_path / "queues" / "cards" / "pnorm" / "majority.yaml"
    doc = yaml.safe_load(config.read_text())
    declared = {"why": "the card's variant was chosen again", "configs": ["0123456789ab"]}
    doc["presets"]["quick-10"]["bench"]["superseded"] = declared
    config.write_text(yaml.safe_dump(doc))
    plan_card(
        PNORM, ["majority"], tmp_path / "results"
    )  # the card's own declaration survives a re-plan: its old runs may go
    assert load_config(str(config), "quick-10")["bench"]["superseded"] == declared
    assert "superseded" not in yaml.safe_load(config.read_text())["presets"]["tuned"]["bench"]  # only where declared


def record(variant: str, seed: int, acc1000: float, acc5000: float, diverged_at: int | None = None) -> dict:
    series = {
        "test/acc": [[1000, acc1000], [5000, acc5000]],
        "train/loss_step": [[10 * i, 2.0 - i * 0.01] for i in range(1, 200)],
        "test/query_angle": [[5000, 40.0 + seed]],
    }
    if diverged_at is not None:  # a run stopped at its first loss that is not finite: nothing tested after it
        series = {"train/loss_step": [[10 * i, 2.0 + i] for i in range(1, diverged_at // 10)]}
        return make_record(variant, seed, status="diverged", series=series, config={}, diverged_at_step=diverged_at)
    return make_record(variant, seed, series=series, config={})


def write_board(
    results: Path,
    accs: dict[str, tuple[float, float]],
    diverged: dict[str, list[int]] | None = None,
    kind: str = "",
) -> None:
    protocol = CardProtocol.of("majority")
    records = [
        record(v, s, a + 0.003 * s, b + 0.002 * s, (diverged or {}).get(v, [None] * 5)[s])
        for v, (a, b) in accs.items()
        for s in range(5)
    ]
    bench = load_config("majority", protocol.preset)["bench"]
    board = build("majority", protocol.preset, records, {"metrics": bench["metrics"]})
    board = board.replace(planned_runs=15, finished_runs=15)
    folder = board_folder(results, card_key("pnorm", "majority", kind))
    folder.mkdir(parents=True)
    (folder / "leaderboard.json").write_text(dumps_board(board), encoding="utf-8")


def test_the_card_judges_the_new_norm_against_layernorm_and_rmsnorm(tmp_path: Path) -> None:
    write_board(tmp_path, {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)})
    section = task_card(PNORM, CardProtocol.of("majority"), tmp_path)
    verdicts = {c["id"].removeprefix("normbench.card.majority."): c["verdict"] for c in section["claims"]}
    assert verdicts["test_acc@1000.beats_layernorm"] == "reproduced"
    assert verdicts["test_acc@1000.beats_rmsnorm"] == "reproduced"
    assert verdicts["test_acc@5000.matches_layernorm"] == "reproduced"  # within 0.01 of 0.89 + noise
    assert section["status"] == "complete" and section["headline"]["test_acc@1000"]["new"]["n"] == 5
    assert section["thresholds"]["steps_to_train_loss_1.0"]["new"]["mean"] == 1050  # a 10-point trailing mean
    card = build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path)
    md = render_card(card)
    assert "| majority | `test_acc@1000` | 0.8060 ± 0.0047 (n = 5) |" in md  # the std to 2 digits, the mean with it
    assert card.summary_lines()[-1] == (
        "majority at the tuned lr: not judged yet: its learning-rate grid `results/cards/pnorm/majority/lr/` has no "
        "finished run"
    )
    assert (  # the tuned rates' row says what it waits for
        "| majority | – at the tuned lr | not judged yet: its learning-rate grid `results/cards/pnorm/majority/lr/` "
        "has no finished run |" in md
    )
    # far ahead of both at step 1000, judged on 5 of the protocol's 10 seeds: better, and never said as final
    assert "| provisional: better so far, 5 of 10 seeds (+" in md and "matches no" not in md
    assert "## majority" in md and "### Against LayerNorm and RMSNorm" in md and "@misc{normbench_card_pnorm," in md
    spent = card.to_json()["training_cost"]  # 5 new-norm runs of 1 s each; a whole card trains 10 + 22 + 10 there
    assert spent["tasks"]["majority"]["runs"] == 5 and spent["tasks"]["majority"]["whole_card_runs"] == 42
    assert spent["estimated_whole_card_s"] == 42.0 and spent["estimated_tasks"] == ["majority"]
    assert "| majority | 5 (of 42) | 5 s | 1 s | cpu |" in md
    assert "the whole card's runs of majority take about 1 min, summed over runs." in md
    first = card.summary_lines()[0]
    assert first.startswith("majority: test_acc@1000: vs LayerNorm provisional: better so far, 5 of 10 seeds (+")
    assert "; vs RMSNorm provisional: better so far, 5 of 10 seeds (+" in first


def test_a_norm_that_diverges_gets_a_card_with_each_seeds_step(tmp_path: Path) -> None:
    steps = [1427, 1431, 1399, 1440, 1412]
    write_board(tmp_path, {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.0, 0.0)},
                diverged={"pre/pnorm": steps})  # fmt: skip
    section = task_card(PNORM, CardProtocol.of("majority"), tmp_path)
    assert section["diverged_at_step"] == {str(s): k for s, k in enumerate(steps)}
    assert {c["verdict"] for c in section["claims"]} == {"not run"}  # no seed has a value to judge
    md = render_card(build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path))
    assert "**Failed seeds of the new norm**: seed 0: diverged at step 1427; seed 1: diverged at step 1431" in md
    assert "| worse (5 of 5 seeds failed: none left to judge) | worse (5 of 5 seeds failed: none left to judge) |" in md
    assert "| majority | `test_acc@1000` | no seed finished without diverging | 0.666" in md


def test_a_seed_that_diverged_is_said_beside_the_verdict_the_others_give(tmp_path: Path) -> None:
    write_board(tmp_path, {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)},
                diverged={"pre/pnorm": [None, None, 1430, None, None]})  # fmt: skip
    card = build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path)
    section = card.tasks[0]
    assert section["failed_seeds"] == {"2": "diverged at step 1430"}
    assert section["headline"]["test_acc@1000"]["new"]["n"] == 4  # judged on the seeds left, and said so
    first = card.summary_lines()[0]
    assert first.startswith("majority: test_acc@1000: vs LayerNorm provisional: better so far, 5 of 10 seeds (+")
    assert first.count(") (1 of 5 seeds failed)") == 2  # the diverged seed has finished: said beside each verdict
    (row, *_) = summary_table(card.tasks)
    assert row["new"].endswith("(n = 4); 1 of 5 seeds failed") and row["layernorm"].endswith("(n = 5)")


def test_a_post_ln_section_is_judged_against_the_post_ln_baselines(tmp_path: Path) -> None:
    accs = {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)}
    write_board(tmp_path, accs)
    write_board(tmp_path, {f"post/{k[4:]}": v for k, v in accs.items()}, kind="post")
    card = build_card(
        PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path, placements=["pre", "post"]
    )
    post = card.tasks[1]
    assert (post["label"], post["board"], post["tuning"]) == ("majority (post)", "cards/pnorm/majority/post", None)
    assert post["variants"] == {"new": "post/pnorm", "layernorm": "post/both", "rmsnorm": "post/scale-blocks"}
    assert {c["id"] for c in post["claims"]} >= {"normbench.card.majority.post.test_acc@1000.beats_layernorm"}
    assert {c["verdict"] for c in post["claims"]} == {c["verdict"] for c in card.tasks[0]["claims"]}
    md = render_card(card)
    assert "## majority (post)" in md and "| majority (post) | `test_acc@1000` | 0.8060 ± 0.0047 (n = 5) |" in md
    assert card.summary_lines()[-1].startswith("majority (post): test_acc@5000: vs LayerNorm provisional: equivalent")


def test_a_section_with_the_baselines_runs_only_says_the_new_norm_has_not_run(tmp_path: Path) -> None:
    write_board(tmp_path, {"post/both": (0.66, 0.89), "post/scale-blocks": (0.69, 0.90)}, kind="post")
    card = build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path, placements=["post"])
    assert card.summary_lines() == ["majority (post): not run yet: 0 of the new norm's 10 runs"]
    assert "## majority (post)" in render_card(card)


def test_a_task_without_a_board_is_not_run(tmp_path: Path) -> None:
    section = task_card(PNORM, CardProtocol.of("lm"), tmp_path)
    assert section["status"] == "not run"
    assert "| lm | – | not run |" in render_card(build_card(PNORM, {}, ["lm"], [{}], tmp_path))


def test_a_broken_norm_gets_a_card_that_says_so_and_trains_nothing(tmp_path: Path) -> None:
    folder = make_card("tests.cards.test_probe:NaNNorm", "majority", at(tmp_path))
    md = (folder / "card.md").read_text()
    assert "**Broken**: `tests.cards.test_probe:NaNNorm` at d = 8: returns values that are not finite" in md
    assert not (tmp_path / "queues").exists() and not (tmp_path / "runs").exists()


def test_a_norm_that_cannot_be_imported_is_one_line_with_exit_2(normbench_in_process, tmp_path: Path) -> None:
    result = normbench_in_process("card", "nowhere.at_all:Norm", "--results_dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "normbench: error: norm: cannot import 'nowhere.at_all:Norm' (ModuleNotFoundError: No module named "
        "'nowhere'); or a named card: dyt, peri, qknorm, scalenorm"
    )
    assert not any(tmp_path.iterdir())


def test_a_bad_norm_is_one_line_where_a_cuda_toolkit_has_no_gpu(tmp_path: Path) -> None:
    """A fresh interpreter with ``CUDA_HOME`` set and no GPU: torch's "No CUDA runtime is found" warning, which the
    card's timing imports, does not come before the one line."""
    if torch.cuda.is_available() or torch.version.cuda is None:
        pytest.skip("the warning is given where torch is built with CUDA and no GPU is present")
    env = {k: v for k, v in os.environ.items() if k != "NORMBENCH_VERBOSE"} | {"CUDA_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "normbench", "card", "nowhere.at_all:Norm", "--results_dir", str(tmp_path / "results")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "normbench: error: norm: cannot import 'nowhere.at_all:Norm' (ModuleNotFoundError: No module named "
        "'nowhere'); or a named card: dyt, peri, qknorm, scalenorm"
    ]


@pytest.mark.slow  # plans every task of a whole card: half a minute; the documented card command covers the build
def test_a_dry_run_card_builds_the_norm_and_shows_its_runs_writing_nothing(
    normbench_in_process, tmp_path: Path
) -> None:
    result = normbench_in_process(
        "card", PNORM, "--tasks", "majority", "--dry_run", "--results_dir", str(tmp_path), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  cards/pnorm/majority\tpre/pnorm\tseed 0\tnot started" in lines
    # where the card goes, what the probe found, every run (the tuned-rate ones waiting for their grid too), the time
    assert lines[0] == f"normbench: card: {PNORM} -> {tmp_path}/cards/pnorm/ (card.md, card.json; its boards under " \
        f"{tmp_path}/cards/pnorm/<task>/)"  # fmt: skip
    assert lines[1].startswith("normbench: card: probe at d = 8: projects no, scales no, output norm / sqrt(d) ")
    assert "x F.layer_norm's" in lines[1]
    (count,) = [line for line in lines if " runs to train" in line]
    assert count.startswith("normbench: dry run: ") and count.endswith("nothing trained")
    assert " at the tuned rates once their grids have chosen (" in count
    assert any("runs at the tuned rates\tplanned once results/cards/pnorm/majority/lr/ has chosen" in x for x in lines)
    assert any(line.startswith("  majority: ") and line.endswith("no estimate (no finished run of the task here to time)")
               for line in lines)  # an empty archive: nothing to time  # fmt: skip
    assert not any(tmp_path.iterdir())
    told = normbench_in_process(
        "card",
        PNORM,
        "--tasks",
        "majority",
        "--train",
        "false",
        "--dry_run",
        "--results_dir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert told.returncode == 0 and told.stdout.splitlines()[-1] == (
        "normbench: dry run: nothing to train (train false); the boards with runs held would be rebuilt"
    )
    bad = normbench_in_process("card", "nowhere.at_all:Norm", "--dry_run", "--results_dir", str(tmp_path), cwd=tmp_path)
    assert bad.returncode == 2 and "cannot import 'nowhere.at_all:Norm'" in bad.stderr
    nan = normbench_in_process(
        "card", "tests.cards.test_probe:NaNNorm", "--dry_run", "--results_dir", str(tmp_path), cwd=tmp_path
    )
    not_finite = int((probe_inputs(8)[:, 0] < 0).sum())  # NaNNorm: NaN where the first feature is negative
    assert nan.returncode == 0 and nan.stdout.splitlines()[1:] == [
        f"normbench: dry run: tests.cards.test_probe:NaNNorm at d = 8 returns values that are not finite for "
        f"{not_finite} of 512 inputs: its card trains nothing"
    ]
    assert not any(tmp_path.iterdir())


def test_a_card_told_not_to_train_is_built_from_the_archive_alone(tmp_path: Path) -> None:
    folder = make_card(PNORM, "majority", at(tmp_path, nice=0, train=False))
    card = yaml.safe_load((folder / "card.json").read_text())
    assert [t["status"] for t in card["tasks"]] == ["not run"]  # no baseline nor run of its own held here
    assert not any((tmp_path / "runs").rglob("record.json"))
    inputs = tmp_path / "queues" / "cards" / "pnorm"  # the same command trains it
    assert folder == tmp_path / "results" / "cards" / "pnorm"
    assert (inputs / "bake.yaml").is_file() and (inputs / "majority.yaml").is_file()


@pytest.mark.slow  # rebuilds a published card: half a minute
def test_a_card_asked_for_one_task_keeps_the_tasks_its_published_card_covers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--tasks sst2`` trains and rebuilds SST-2 only; the card still covers majority, read from its board."""
    import normbench.sweep.bake

    baked: list[list[dict]] = []
    monkeypatch.setattr(
        normbench.sweep.bake,
        "bake",
        lambda queue, *_, **__: baked.append(yaml.safe_load(Path(queue).read_text())["queue"]),
    )
    write_board(
        tmp_path / "results", {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)}
    )
    first = make_card(PNORM, "majority", at(tmp_path, nice=0, train=False))
    was = yaml.safe_load((first / "card.json").read_text())
    folder = make_card(PNORM, "sst2", at(tmp_path, nice=0, train=False))
    card = yaml.safe_load((folder / "card.json").read_text())
    assert [t["task"] for t in card["tasks"]] == ["majority", "sst2"]
    assert card["tasks"][0]["headline"] == was["tasks"][0]["headline"]  # the majority section as published
    assert [{item["task"] for item in queue} for queue in baked] == [{"majority"}, {"sst2"}]  # only what was asked
    queue = yaml.safe_load((tmp_path / "queues" / "cards" / "pnorm" / "bake.yaml").read_text())["queue"]
    assert {item["task"] for item in queue} == {"majority", "sst2"}  # the card's queue still trains both
    (folder / "card.json").write_text('{"tasks": [')  # a card that cannot be read is never narrowed
    with pytest.raises(ValueError, match=r"^results_dir: .*card.json exists but is unreadable \(") as exc:
        make_card(PNORM, "sst2", at(tmp_path, nice=0, train=False))
    assert str(exc.value).count("card.json") == 1 and "--force" not in str(exc.value)  # one line, one remedy


def test_a_card_covers_every_task_with_a_card_board_even_after_a_broken_card(tmp_path: Path) -> None:
    """A card written while its norm was broken covers no task; its boards still name the tasks it had."""
    from normbench.cards.make import card_tasks

    write_board(tmp_path, {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)})
    (tmp_path / "cards" / "pnorm").mkdir(parents=True, exist_ok=True)  # the folder of its boards
    (tmp_path / "cards" / "pnorm" / "card.json").write_text('{"tasks": []}')
    assert card_tasks(PNORM, ["lm"], tmp_path) == ["majority", "lm"]


def write_tuning_boards(results: Path) -> None:
    """The card's grid (lr 1e-3, 6e-3, 1e-2; tuning seeds 100-101; the new norm's seed 101 diverges at 1e-2) and its
    judging seeds 0-4 at the shared rate and at each variant's chosen one."""
    bench = load_config("majority", "quick-10")["bench"]
    choice = {"axis": "lr", "metric": "test_acc@5000", "goal": "max", "report": []}
    best = {"pre/both": "0.006", "pre/scale-blocks": "0.006", "pre/pnorm": "0.001"}
    grid = [
        record(
            f"{v},lr={r}",
            s,
            0.7,
            (0.95 if r == best[v] else 0.9) + 0.001 * s,
            1500 if (v, r, s) == ("pre/pnorm", "0.01", 101) else None,
        )  # fmt: skip
        for v in best
        for r in ("0.001", "0.006", "0.01")
        for s in (100, 101)
    ]
    lr = build("majority", "lr", grid, {"metrics": bench["metrics"], "choice": choice})
    board_folder(results, "cards/pnorm/majority/lr").mkdir(parents=True)
    (board_folder(results, "cards/pnorm/majority/lr") / "leaderboard.json").write_text(dumps_board(lr))
    names = [v.name for v in lr.variants]
    view = tuned_view.resolve({"choice": "cards/pnorm/majority/lr", "shared": 1e-3}, names, results)
    judged = {"pre/both,lr=0.001": 0.66, "pre/scale-blocks,lr=0.001": 0.69, "pre/pnorm,lr=0.001": 0.70,
              "pre/both,lr=0.006": 0.80, "pre/scale-blocks,lr=0.006": 0.82}  # fmt: skip
    records = [record(n, s, a + 0.003 * s, 0.9) for n, a in judged.items() for s in range(5)]
    board = build("majority", "tuned", records, {"metrics": bench["metrics"], "tuned": view})
    board_folder(results, "cards/pnorm/majority/tuned").mkdir(parents=True)
    (board_folder(results, "cards/pnorm/majority/tuned") / "leaderboard.json").write_text(dumps_board(board))


def test_the_card_judges_at_each_variants_tuned_rate_and_counts_failures_over_the_grid(tmp_path: Path) -> None:
    write_board(tmp_path, {"pre/both": (0.66, 0.89), "pre/scale-blocks": (0.69, 0.90), "pre/pnorm": (0.70, 0.895)})
    write_tuning_boards(tmp_path)
    section = task_card(PNORM, CardProtocol.of("majority"), tmp_path)
    tuning = section["tuning"]
    assert tuning["grid"]["failed_seeds"]["new"] == {"0.001": [], "0.006": [], "0.01": ["101"]}
    rates = tuning["tuned"]["rates"]
    assert (rates["new"]["chosen"], rates["layernorm"]["chosen"], tuning["tuned"]["shared"]) == (
        "0.001",
        "0.006",
        "0.001",
    )
    verdicts = {c["id"].removeprefix("normbench.card.majority."): c for c in tuning["tuned"]["claims"]}
    # ahead of both at the shared rate, behind both once each baseline runs at its own rate
    assert verdicts["test_acc@1000.beats_layernorm"]["verdict"] == "not reproduced"
    assert verdicts["test_acc@1000.beats_layernorm"]["rates"] == {"new": "0.001", "layernorm": "0.006"}
    md = render_card(build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], tmp_path))
    assert (
        "### At each variant's tuned learning rate" in md and "| new | 0.001 | 0.001 | yes |" in md
    )  # the grid's first point
    assert "| 0.01 | 101 | none | none |" in md
    assert "| majority | `test_acc@1000` at the tuned lr | 0.7060 ± 0.0047 (n = 5) | 0.8060" in md


@pytest.mark.parametrize(
    ("finished", "says"),
    [
        (
            42,
            "grid `results/cards/x/majority/lr/` is finished (42 runs). Each variant's rate is chosen on it; its judging",
        ),
        (
            30,
            "grid `results/cards/x/majority/lr/` has 30 of 42 runs. Each variant's rate is chosen once it is finished",
        ),
        (None, "grid `results/cards/x/majority/lr/` has 30 finished runs. Each variant's rate is chosen once it is"),
    ],
)
def test_a_tuning_section_says_whether_its_grid_or_its_judging_seeds_wait(finished: int, says: str) -> None:
    from normbench.cards.render import tuning_lines
    from normbench.cards.summary import grid_progress, waiting

    planned = None if finished is None else 42
    grid = {"planned": planned, "finished": finished or 30, "failed_seeds": {}, "seeds": [100, 101]}
    tuning = {"grid_board": "cards/x/majority/lr", "tuned_board": "cards/x/majority/tuned", "grid": grid, "tuned": None}
    section = "\n".join(tuning_lines({"tuning": tuning}))
    assert says in section
    phrase = grid_progress(tuning)[1]
    assert f"Not judged yet: {phrase}." in section and waiting(tuning).startswith(f"not judged yet: {phrase}")


def test_a_norm_that_fails_at_every_rate_of_its_grid_says_so_at_the_tuned_rate() -> None:
    """A norm that diverges at every rate has no tuned rate: its tuned rows say why, not "not run"."""
    from normbench.cards.render import tuning_lines
    from normbench.cards.summary import no_rate
    from normbench.judge.claims import judge

    protocol = CardProtocol.of("majority")
    claims = [judge(c, {}, None) for c in card_claims(protocol, "pre/pnorm") if "test_acc@1000" in c["id"]]
    assert claims and all(c["verdict"] == "not run" for c in claims)
    grid = {
        "planned": 6,
        "finished": 6,
        "seeds": [100, 101],
        "failed_seeds": {"new": {"0.001": ["100", "101"], "0.01": ["100", "101"]}},
    }
    tuned = {
        "planned": 50, "finished": 50, "shared": 0.001, "claims": claims,
        "rates": {"new": {"chosen": None, "at_edge": False}, "layernorm": {"chosen": "0.006", "at_edge": False}},
        "headline": {"test_acc@1000": {"new": None, "layernorm": None, "rmsnorm": None}},
    }  # fmt: skip
    tuning = {
        "grid_board": "cards/x/majority/lr",
        "tuned_board": "cards/x/majority/tuned",
        "grid": grid,
        "tuned": tuned,
    }
    assert no_rate(tuning) == "every seed failed at all 2 rates of its grid"
    task = {"task": "majority", "status": "complete", "headline": {}, "claims": [], "seeds": [0], "tuning": tuning}
    (row,) = summary_table([task])
    assert row["vs_layernorm"] == "worse (every seed failed at all 2 rates of its grid)"
    assert "The new norm has no tuned rate: every seed failed at all 2 rates" in "\n".join(tuning_lines(task))
    grid["failed_seeds"]["new"]["0.01"] = ["100"]
    assert no_rate(tuning) == "no rate was chosen on its grid"
    tuned["rates"]["new"]["chosen"] = "0.01"
    assert no_rate(tuning) is None
    tuned["failed_by_role"] = {"new": [3, 3]}  # at its chosen rate, every judging seed failed: said as at the shared
    (row,) = summary_table([task])
    assert row["vs_rmsnorm"] == "worse (3 of 3 seeds failed: none left to judge)"
