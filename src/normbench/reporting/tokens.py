"""Tables 3-4 of Brody et al. (2023): SST-2 dev sentences with their unselectable tokens in bold.

A token is marked when its key (its row of the attention input) is unselectable in at least one
layer. The sentences are rendered from the original text through the tokenizer's character
offsets, so a word is bold when any of its pieces is unselectable, whatever the tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.archive import JudgedClaim, load_record
from normbench.data.tokenizer import load_tokenizer
from normbench.io import atomic_write_json, atomic_write_text
from normbench.reporting.claims import judge, load_claims
from normbench.reporting.claims_view import INTRO, summary_rows
from normbench.tasks.trust import record_class
from normbench.training.loading import load_run
from normbench.training.records import provenance
from normbench.training.rundir import checkpoint_of, tokenizer_path

TOKEN_REPORT = "unselectable_tokens.json"  # beside it: unselectable_tokens.md


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    spans, start = [], None
    for i, ch in enumerate(text + " "):
        if ch.isspace():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    return spans


def render_bold(text: str, offsets: list[tuple[int, int]], marked: list[bool]) -> str:
    """``text`` with every word that overlaps a marked token span in **bold**."""
    hits = [span for span, m in zip(offsets, marked, strict=False) if m and span[1] > span[0]]
    words = []
    for a, b in word_spans(text):
        word = text[a:b]
        words.append(f"**{word}**" if any(s < b and e > a for s, e in hits) else word)
    return " ".join(words)


def analyse_sentences(
    model: torch.nn.Module,
    encodings: list[Any],
    content: Callable[[Any], list[bool]],
    forward_args: Callable[[torch.Tensor, torch.Tensor], tuple],
    batch_size: int = 64,
) -> list[dict[str, Any]]:
    """Per sentence: which tokens are unselectable in which layer.

    ``content(encoding)`` marks the tokens that belong to the sentence (not [CLS]/[SEP]/EOS);
    ``forward_args(ids, padding_mask)`` are the model's inputs for a padded batch.
    """
    out = []
    device = next(model.parameters()).device
    for start in range(0, len(encodings), batch_size):
        chunk = encodings[start : start + batch_size]
        longest = max(len(e.ids) for e in chunk)
        ids = torch.zeros(len(chunk), longest, dtype=torch.long, device=device)
        pad = torch.ones(len(chunk), longest, dtype=torch.bool, device=device)
        for row, e in enumerate(chunk):
            ids[row, : len(e.ids)] = torch.as_tensor(e.ids, device=device)
            pad[row, : len(e.ids)] = False
        layers = unselectable_per_layer(model, *forward_args(ids, pad), key_padding_mask=pad, heads=False)
        for row, e in enumerate(chunk):
            n = len(e.ids)
            out.append(
                {"per_layer": [layer["positions_after"][row, :n].tolist() for layer in layers], "content": content(e)}
            )
    return out


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of unselectable sentence tokens per layer and in any layer."""
    n_layers = len(results[0]["per_layer"]) if results else 0
    total = sum(sum(r["content"]) for r in results)
    per_layer = [
        sum(sum(u and c for u, c in zip(r["per_layer"][i], r["content"], strict=False)) for r in results)
        for i in range(n_layers)
    ]
    any_layer = sum(
        sum(c and any(layer[j] for layer in r["per_layer"]) for j, c in enumerate(r["content"])) for r in results
    )
    sentences = sum(
        any(c and any(layer[j] for layer in r["per_layer"]) for j, c in enumerate(r["content"])) for r in results
    )
    return {
        "sentences": len(results),
        "tokens": total,
        "per_layer": per_layer,
        "any_layer": any_layer,
        "fraction_any_layer": any_layer / total if total else 0.0,
        "sentences_with_unselectable": sentences,
    }


def load_trained(record_path: Path) -> tuple[dict[str, Any], Any, Any]:
    """(record, trained LightningModule in eval mode, tokenizer saved next to the run) of a finished run."""
    record = load_record(record_path).to_json()
    run = Path(record_path).parent
    ckpt = checkpoint_of(record, run)
    if record["status"] != "done" or ckpt is None:
        raise ValueError(f"{record_path}: the run is {record['status']!r} without a final checkpoint")
    _, module = load_run(ckpt)
    return record, module, load_tokenizer(tokenizer_path(run))


def sst2_model_tokens(
    record_path: Path, sentences: list[str]
) -> tuple[dict[str, Any], list[Any], list[dict[str, Any]]]:
    record, module, tokenizer = load_trained(record_path)
    max_len = module.arch.max_positions
    tokenizer.enable_truncation(min(max_len, 128))
    encodings = tokenizer.encode_batch(sentences)
    results = analyse_sentences(
        module.model, encodings, lambda e: [m == 0 for m in e.special_tokens_mask], lambda ids, pad: (ids, pad)
    )
    return record, encodings, results


def lm_model_tokens(record_path: Path, sentences: list[str]) -> tuple[dict[str, Any], list[Any], list[dict[str, Any]]]:
    record, module, tokenizer = load_trained(record_path)
    tokenizer.enable_truncation(module.arch.max_positions)
    encodings = tokenizer.encode_batch(sentences)
    results = analyse_sentences(module.model, encodings, lambda e: [True] * len(e.ids), lambda ids, pad: (ids,))
    return record, encodings, results


def section(
    title: str,
    what: str,
    record: dict[str, Any],
    summary: dict[str, Any],
    sentences: list[str],
    encodings: list[Any],
    results: list[dict[str, Any]],
    shown: int,
) -> list[str]:
    layers = ", ".join(f"L{i + 1}: {n}" for i, n in enumerate(summary["per_layer"]))
    lines = [
        f"## {title}",
        "",
        what,
        "",
        f"Run `{record['log_dir']}` (variant `{record['variant']}`, seed {record['seed']}, "
        f"config hash `{record['config_hash']}`).",
        "",
        f"Over all {summary['sentences']} dev sentences: {summary['any_layer']} of {summary['tokens']} tokens "
        f"({100 * summary['fraction_any_layer']:.1f}%) are unselectable in at least one layer, in "
        f"{summary['sentences_with_unselectable']} sentences; per layer: {layers}.",
        "",
        f"The first {shown} dev sentences, in file order (tokens unselectable in at least one layer in **bold**):",
        "",
    ]
    for text, enc, res in list(zip(sentences, encodings, results, strict=False))[:shown]:
        marked = [c and any(layer[j] for layer in res["per_layer"]) for j, c in enumerate(res["content"])]
        lines.append(f"- {render_bold(text, enc.offsets, marked)}")
    return lines + [""]


def find_record(plan: Any, task: str, preset: str, variant: str, seed: int) -> Path | None:
    """The finished record of one run that ``plan`` (a :data:`normbench.reporting.write.RunPlanner`) finds."""
    _, runs = plan(task, preset, [seed], [variant])
    path = runs[0].record_path
    return path if finished(path) else None  # unfinished: reported as not run


def finished(path: Path | None) -> bool:
    """Whether ``path`` is the record of a run that is done (and so has its final checkpoint)."""
    return path is not None and path.is_file() and load_record(path).status == "done"


def dev_sentences(run_config: dict[str, Any]) -> list[str]:
    """The dev sentences of the data module of a resolved ``sst2`` config (its ``raw()`` test split)."""
    data = run_config["data"]
    cls = record_class(data.get("class_path"), "data")  # a record's config: registered classes only
    init_args = {**getattr(cls, "LEGACY_INIT_ARGS", {}), **(data.get("init_args") or {})}  # as the run trained
    return cls(**init_args).raw()["test"]["sentence"]


def write_token_report(
    config: dict[str, Any],
    preset: str,
    out_dir: Path,
    runs: Sequence[Any],
    plan: Any,
    load_sentences: Callable[[dict[str, Any]], list[str]] = dev_sentences,
) -> dict[str, Any]:
    """Write ``unselectable_tokens.md`` / ``.json`` from the trained runs named by ``bench.token_report``.

    Table 4 reads this sweep's run (``runs``) of the named variant and seed; Table 3 reads the
    ``lm`` task's own bench, whose runs ``plan`` (a :data:`normbench.reporting.write.RunPlanner`) finds.
    ``load_sentences(config)`` gives the dev sentences of an sst2 config.
    """
    spec = config["bench"]["token_report"]
    shown = int(spec.get("sentences", 40))
    doc: dict[str, Any] = {"provenance": provenance(), "sections": {}, "claims": []}
    lines = [
        "# Unselectable tokens on SST-2 dev sentences (Brody et al. 2023, Tables 3-4)",
        "",
        "Generated by `normbench leaderboard sst2` from the trained checkpoints; do not edit by hand. A token is",
        "unselectable in a layer when its key (its row of that layer's attention input) lies in the convex hull",
        "of the other keys of its sentence, so no query can give it the top score.",
        "",
    ]
    # the sentences shown: the named seed's run, else the first finished seed of the variant
    done = sorted(
        (
            (r.seed != spec["seed"], r.seed, r.record_path)
            for r in runs
            if r.variant == spec["variant"] and finished(r.record_path)
        ),
        key=lambda t: t[:2],
    )
    shown_seed, sst2_path = (done[0][1], done[0][2]) if done else (spec["seed"], None)
    sentences = load_sentences(load_record(sst2_path).config if sst2_path is not None else config)
    if sst2_path is None:
        lines += ["## Table 4", "", f"Not run: no finished `sst2` run of `{spec['variant']}`.", ""]
    else:
        record, enc, res = sst2_model_tokens(sst2_path, sentences)
        summary = summarize(res)
        lines += section(
            "Table 4: BERT-style encoder without LayerNorm",
            "The sst2 task's model with every LayerNorm removed, its own WordPiece tokenizer.",
            record,
            summary,
            sentences,
            enc,
            res,
            shown,
        )
        per_seed = {shown_seed: summary}
        for _, seed, path in done[1:]:  # every other finished seed of the variant: its counts
            per_seed[seed] = summarize(sst2_model_tokens(path, sentences)[2])
        doc["sections"]["table4"] = {
            "record": str(sst2_path),
            "summary": summary,
            "per_seed": {str(k): v for k, v in sorted(per_seed.items())},
        }
        lines += seed_table("Table 4 over every seed", "sst2", {spec["variant"]: per_seed}, sorted(per_seed))
    lm = spec.get("lm")
    lm_summaries: dict[str, dict[int, dict[str, Any]]] = {}
    if lm:
        seeds = lm_seeds(lm, plan)
        for variant in filter(None, (lm["variant"], lm.get("reference"))):
            for seed in seeds:
                path = find_record(plan, "lm", lm["preset"], variant, seed)
                if path is None:
                    continue
                record, enc, res = lm_model_tokens(path, sentences)
                summary = summarize(res)
                lm_summaries.setdefault(variant, {})[seed] = summary
                doc["sections"][f"table3:{variant}:seed{seed}"] = {"record": str(path), "summary": summary}
                if variant == lm["variant"] and len(lm_summaries[variant]) == 1:  # the sentences of its first seed
                    lines += section(
                        "Table 3: the language model without scaling",
                        f"The lm task's `{variant}` model "
                        "(projection-only norm in front of attention) on the same sentences, with its own "
                        "byte-level BPE tokenizer.",
                        record,
                        summary,
                        sentences,
                        enc,
                        res,
                        shown,
                    )
        if lm_summaries:
            lines += seed_table("Table 3 over every seed", "lm", lm_summaries, seeds)
        else:
            lines += [
                "## Table 3",
                "",
                f"Not run: no finished `lm` runs (preset `{lm['preset']}`, seeds {seeds}); "
                "run `nox -s bench-lm` first.",
                "",
            ]
    return finish(doc, lines, lm_summaries, out_dir)


def report_runs(config: dict[str, Any], runs: Sequence[Any], plan: Any) -> dict[tuple[str, int], str | None]:
    """The runs :func:`write_token_report` would read, as ``("sst2 <variant>", seed)`` (Table 4, from
    ``runs``) and ``("lm <variant>", seed)`` (Table 3) -> ``None``; nothing is loaded but the records."""
    spec = config["bench"]["token_report"]
    found: dict[tuple[str, int], str | None] = {
        (f"sst2 {spec['variant']}", r.seed): None
        for r in runs
        if r.variant == spec["variant"] and finished(r.record_path)
    }
    lm = spec.get("lm")
    if lm:
        seeds = lm_seeds(lm, plan)
        for variant in filter(None, (lm["variant"], lm.get("reference"))):
            _, planned = plan("lm", lm["preset"], seeds, [variant])  # the runs find_record finds, all seeds
            found.update({(f"lm {variant}", r.seed): None for r in planned if finished(r.record_path)})
    return found


def published_runs(doc: dict[str, Any], config: dict[str, Any]) -> dict[tuple[str, int], str | None]:
    """The runs an ``unselectable_tokens.json`` read, named as :func:`report_runs` names them."""
    variant = config["bench"]["token_report"]["variant"]
    sections = doc["sections"]
    found: dict[tuple[str, int], str | None] = {
        (f"sst2 {variant}", int(seed)): None for seed in (sections.get("table4") or {}).get("per_seed") or {}
    }
    for key in sections:
        if m := re.fullmatch(r"table3:(.+):seed(\d+)", key):
            found[(f"lm {m[1]}", int(m[2]))] = None
    return found


def lm_seeds(lm: dict[str, Any], plan: Any) -> list[int]:
    """The ``lm`` seeds Table 3 reads: ``bench.token_report.lm.seeds``, else every seed of the lm preset's bench."""
    if lm.get("seeds") is not None:
        return [int(s) for s in lm["seeds"]]
    config, _ = plan("lm", lm["preset"], None, [lm["variant"]])
    return [int(s) for s in (config.get("bench") or {}).get("seeds") or [0]]


def seed_table(title: str, task: str, summaries: dict[str, dict[int, dict[str, Any]]], seeds: list[int]) -> list[str]:
    """Markdown: unselectable dev-sentence tokens of each model of ``task``, one column per seed."""
    lines = [
        f"### {title}",
        "",
        f"Tokens unselectable in at least one layer, of all dev-sentence tokens, per {task} seed "
        "(– = no finished run):",
        "",
        f"| {task} model | " + " | ".join(f"seed {s}" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for variant, by_seed in summaries.items():
        cells = [
            f"{by_seed[s]['any_layer']} / {by_seed[s]['tokens']} ({100 * by_seed[s]['fraction_any_layer']:.2f}%)"
            if s in by_seed
            else "–"
            for s in seeds
        ]
        lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
    return lines + [""]


def claims_lines(claims: list[dict[str, Any]]) -> list[str]:
    """The report's claims section: the summary table (measured as fractions of tokens), then each claim's details."""
    return ["## Claims", "", INTRO, "", *summary_rows([JudgedClaim.from_json(c) for c in claims])]


def finish(
    doc: dict[str, Any], lines: list[str], lm_summaries: dict[str, dict[int, dict[str, Any]]], out_dir: Path
) -> dict[str, Any]:
    """Judge the Table 3 claim over every lm seed and write both files atomically."""
    variants = {}
    for v, by_seed in lm_summaries.items():
        per_seed = [by_seed[s]["fraction_any_layer"] for s in sorted(by_seed)]
        variants[f"lm/{v}"] = {
            "metrics": {"unselectable_tokens": {"mean": sum(per_seed) / len(per_seed), "per_seed": per_seed}}
        }
    claims = [judge(c, variants) for c in load_claims("brody2023-sst2-tokens")]
    doc["claims"] = claims
    lines += claims_lines(claims)
    atomic_write_json(out_dir / TOKEN_REPORT, doc)
    atomic_write_text(out_dir / "unselectable_tokens.md", "\n".join(lines) + "\n")
    return doc
