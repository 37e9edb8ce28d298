"""Text corpora: WikiText article grouping, local loading errors, the article split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.text import default_data_dir, group_articles, load_articles, load_local_lines, split_articles
from tests.lm_corpus import write_corpus

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "wikitext-2"


def test_group_articles_cuts_at_top_level_headings_only() -> None:
    lines = [" ", " = Alpha = ", " ", " text a ", " = = History = = ", " more a ", " ", " = Beta = ", " text b "]
    assert group_articles(lines) == ["= Alpha =\ntext a\n= = History = =\nmore a\n", "= Beta =\ntext b\n"]


def test_group_articles_keeps_text_before_the_first_heading() -> None:
    assert group_articles(["preamble", " = T = ", "body"]) == ["preamble\n", "= T =\nbody\n"]


def test_load_local_reads_every_txt_file_in_name_order(tmp_path: Path) -> None:
    titles = write_corpus(tmp_path / "wt")
    articles = load_articles("local", tmp_path / "wt", "", None, [], "wikitext")
    # test.txt sorts before valid.txt; each file holds half of the articles
    assert [a.splitlines()[0] for a in articles] == [f"= {t} =" for t in titles]


def test_missing_directory_is_a_one_line_error_with_the_path_and_the_remedy(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        load_local_lines(tmp_path / "nowhere")
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "nowhere") in msg and "NORMBENCH_DATA_DIR" in msg and "hub" in msg


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ValueError, match="no non-empty"):
        load_local_lines(tmp_path)


def test_default_data_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_DATA_DIR", "/data")
    assert default_data_dir("wikitext-2") == Path("/data/wikitext-2")
    monkeypatch.delenv("NORMBENCH_DATA_DIR")
    assert default_data_dir("wikitext-2") == Path("../shared/data/wikitext-2")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(5, 300), val=st.floats(0.01, 0.3), ana=st.floats(0.01, 0.3), seed=st.integers(0, 2**31))
def test_split_is_a_seeded_partition(n: int, val: float, ana: float, seed: int) -> None:
    fractions = {"validation": val, "analysis": ana}
    try:
        parts = split_articles(n, fractions, seed)
    except ValueError as exc:
        assert "cannot be split" in str(exc)
        return
    joined = np.concatenate(list(parts.values()))
    assert sorted(joined.tolist()) == list(range(n))  # disjoint and complete
    assert all(len(parts[k]) == max(1, round(f * n)) for k, f in fractions.items())
    again = split_articles(n, fractions, seed)
    assert all(np.array_equal(parts[k], again[k]) for k in parts)


def test_split_depends_on_the_seed() -> None:
    a, b = split_articles(100, {"validation": 0.1}, 0), split_articles(100, {"validation": 0.1}, 1)
    assert not np.array_equal(a["validation"], b["validation"])


def test_split_fraction_out_of_range_names_the_field() -> None:
    with pytest.raises(ValueError, match="data.validation_fraction"):
        split_articles(10, {"validation": 1.5}, 0)


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared WikiText-2 files are not on this machine")
def test_shared_wikitext_has_whole_articles() -> None:
    articles = load_articles("local", SHARED, "", None, [], "wikitext")
    assert len(articles) == 122  # 60 validation + 62 test articles
    assert all(a.startswith("= ") for a in articles)


def test_hub_source_loads_the_named_corpus_and_its_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    calls = []

    def fake_load_dataset(name, config=None, split=None):  # noqa: ANN001, ANN202
        calls.append((name, config, split))
        return datasets.Dataset.from_dict({"text": [f" = T{split} = ", " body "]})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    articles = load_articles("hub", None, "wikitext", "wikitext-103-v1", ["train", "test"], "wikitext")
    assert calls == [("wikitext", "wikitext-103-v1", "train"), ("wikitext", "wikitext-103-v1", "test")]
    assert articles == ["= Ttrain =\nbody\n", "= Ttest =\nbody\n"]


def test_unreachable_hub_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    def offline(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise ConnectionError("Couldn't reach 'wikitext' on the Hub\\n(details)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(ValueError, match="data.hub_name: could not load 'wikitext'") as err:
        load_articles("hub", None, "wikitext", None, ["train"], "wikitext")
    assert "\n" not in str(err.value)
