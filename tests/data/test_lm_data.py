"""LM data module: article-level splits, packing, caching of the tokenizer and token streams."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import normbench.data.lm as lm_data
from normbench.data.lm import LMDataModule, pack
from tests.lm_corpus import write_corpus


def module(folder: Path, **kw) -> LMDataModule:
    args = {
        "data_dir": str(folder),
        "vocab_size": 400,
        "context": 32,
        "batch_size": 4,
        "eval_batch_size": 4,
        "analysis_sequences": 5,
        "analysis_length": 24,
        "validation_fraction": 0.2,
        "analysis_fraction": 0.2,
    }
    return LMDataModule(**{**args, **kw})


def test_pack_drops_the_tail() -> None:
    import numpy as np

    rows = pack(np.arange(10, dtype=np.uint16), 4)
    assert rows.dtype == torch.int64 and rows.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_splits_hold_whole_distinct_articles(tmp_path: Path) -> None:
    titles = write_corpus(tmp_path / "wt")
    dm = module(tmp_path / "wt")
    dm.setup("fit")
    tok = dm.tokenizer
    seen = {}
    for split, stream in dm.streams.items():
        text = tok.decode(stream.tolist(), skip_special_tokens=False)
        seen[split] = {t for t in titles if f"= {t} =" in text}
    assert seen["train"] | seen["validation"] | seen["analysis"] == set(titles)
    assert not (seen["train"] & seen["validation"]) and not (seen["train"] & seen["analysis"])
    assert len(seen["validation"]) == len(seen["analysis"]) == round(0.2 * len(titles))


def test_loaders_yield_context_blocks(tmp_path: Path) -> None:
    write_corpus(tmp_path / "wt")
    dm = module(tmp_path / "wt")
    dm.setup("fit")
    (batch,) = next(iter(dm.train_dataloader()))
    assert batch.shape == (4, 32) and batch.dtype == torch.int64
    analysis = dm.analysis_blocks()
    assert analysis.shape == (5, 24)
    assert torch.equal(analysis, dm.analysis_blocks())  # the same sequences every time


def test_second_setup_reuses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path / "wt")
    first = module(tmp_path / "wt")
    first.setup("fit")

    def fail(*args, **kwargs):
        raise AssertionError("the tokenizer was trained again")

    monkeypatch.setattr(lm_data, "train_bpe", fail)
    second = module(tmp_path / "wt", context=16)  # another context: same cached streams
    second.setup("fit")
    assert all((second.streams[k] == first.streams[k]).all() for k in first.streams)
    with pytest.raises(AssertionError):  # a new vocabulary size is a new cache entry
        module(tmp_path / "wt", vocab_size=300).setup("fit")


def test_missing_data_dir_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline, so the missing folder is reported at once (the hub's failure behind source auto: test_lm_task)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError) as err:
        module(tmp_path / "absent").setup("fit")
    assert "\n" not in str(err.value) and "absent" in str(err.value)


def test_bad_sizes_name_the_field(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="data.context"):
        module(tmp_path, context=0)
    write_corpus(tmp_path / "wt")
    with pytest.raises(ValueError, match="data.context"):
        module(tmp_path / "wt", context=10**6).setup("fit")


def test_unigram_entropy_is_the_entropy_of_the_token_counts() -> None:
    import math

    import numpy as np

    # p = (1/2, 1/4, 1/4): H = 1/2 ln 2 + 2 (1/4 ln 4) = 1.5 ln 2
    assert lm_data.unigram_entropy(np.array([7, 7, 3, 0], dtype=np.uint16)) == pytest.approx(1.5 * math.log(2))
    assert lm_data.unigram_entropy(np.array([5, 5, 5], dtype=np.uint16)) == 0.0
    assert lm_data.unigram_entropy(np.zeros(0, dtype=np.uint16)) == 0.0


def test_the_modules_unigram_entropy_is_a_direct_count_of_its_training_stream(tmp_path: Path) -> None:
    import math
    from collections import Counter

    write_corpus(tmp_path / "wt")
    dm = module(tmp_path / "wt")
    tokens = dm.blocks("train", 1).flatten().tolist()  # every training token, <|endoftext|> included
    counts = Counter(tokens)
    direct = -sum(c / len(tokens) * math.log(c / len(tokens)) for c in counts.values())
    assert dm.unigram_entropy() == pytest.approx(direct, rel=1e-12)
    assert 0.0 < direct < math.log(len(counts)) and dm.unigram_entropy("validation") > 0.0


@pytest.mark.parametrize("name", ["train.npy", "analysis.npy", "tokenizer.json"])
def test_a_corrupt_cached_file_is_named_and_the_cache_built_again(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_corpus(tmp_path / "wt")
    first = module(tmp_path / "wt", cache_dir=str(tmp_path / "cache"))
    first.setup("fit")
    path = first.folder / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    capsys.readouterr()
    again = module(tmp_path / "wt", cache_dir=str(tmp_path / "cache"))
    again.setup("fit")
    err = capsys.readouterr().err.strip().splitlines()
    assert any(line.startswith(f"normbench: data cache {path} is corrupt (") for line in err), err
    assert path.read_bytes() == data  # the same cache, rebuilt
    assert all((again.streams[k] == first.streams[k]).all() for k in first.streams)
