"""The report cards' documentation: a page per card holding the card and its boards, and the cards index's table."""

from __future__ import annotations

from pathlib import Path

from normbench.cards.build import build_card
from normbench.cards.probe import probe
from normbench.cards.render import render_card
from normbench.site import board_pages, card_pages, docs_pages
from tests.cards.test_card import PNORM, write_board


def write_card(results: Path) -> None:
    write_board(results, {"pre/both": (0.66, 0.89), "pre/scale": (0.69, 0.90), "pre/pnorm": (0.80, 0.895)})
    (results / "cards" / "pnorm" / "majority" / "leaderboard.md").write_text(
        "# The board\n\n| variant |\n", encoding="utf-8"
    )
    card = build_card(PNORM, {8: probe(PNORM, 8, timing=False)}, ["majority"], [{}], results)
    folder = results / "cards" / "pnorm"  # the card's folder holds its boards: made by write_board
    (folder / "card.json").write_text(card.dumps(), encoding="utf-8")
    (folder / "card.md").write_text(render_card(card), encoding="utf-8")


def test_a_cards_board_is_shown_on_the_cards_page() -> None:
    assert board_pages.page_of("cards/pnorm/majority") == "cards/pnorm.md"
    assert board_pages.page_of("cards/qknorm/lm") == "cards/qknorm.md"
    assert (
        board_pages.page_of("cards/pnorm/majority/lr")
        == board_pages.page_of("cards/pnorm/majority/tuned")
        == "cards/pnorm.md"
    )
    assert board_pages.page_of("majority/quick-10") == "results/majority-quick-10.md"
    assert card_pages.page_of_card_board("majority") is None
    assert card_pages.page_of_card_board("majority/lr") is None
    assert card_pages.page_of_card_board("cards/pnorm") is None  # the card's own folder holds no board


def test_every_card_gets_its_page_and_a_row_of_the_index(tmp_path: Path) -> None:
    results, docs = tmp_path / "results", tmp_path / "docs"
    write_card(results)
    (docs / "cards").mkdir(parents=True)
    (docs / "cards" / "index.md").write_text("# Cards\n\n<!-- generated: cards -->\n", encoding="utf-8")
    assert docs_pages.write_pages(docs, results, tmp_path, check=True) == [docs / "cards" / "pnorm.md",
                                                                            docs / "cards" / "index.md"]  # fmt: skip
    stale = docs_pages.write_pages(docs, results, tmp_path)
    assert sorted(stale) == [docs / "cards" / "index.md", docs / "cards" / "pnorm.md"]
    page = (docs / "cards" / "pnorm.md").read_text(encoding="utf-8")
    assert page.startswith("# Report card: `examples.pnorm_example:PNorm`\n")
    assert "<!-- include: cards/pnorm/card.md -->" in page and "<!-- board: cards/pnorm/majority -->" in page
    assert "## normbench report card: `examples.pnorm_example:PNorm`" in page  # the card, a level down
    assert "## The board" in page
    index = (docs / "cards" / "index.md").read_text(encoding="utf-8")
    assert (
        "| [`examples.pnorm_example:PNorm`](pnorm.md) | majority | `test_acc@1000` | 0.8060 ± 0.0047 (n = 5) |" in index
    )
    assert docs_pages.write_pages(docs, results, tmp_path, check=True) == []
    assert board_pages.published(results, docs) == ["cards/pnorm/majority"]
