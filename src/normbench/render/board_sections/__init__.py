"""The sections of a board's ``leaderboard.md`` below its header, each a pure function of the board: the cells of its
tables, its variants and seeds, the paper's protocol and tables beside it, the placement x component matrix, the build
it replaces, and where its runs trained (:mod:`normbench.render.board` puts them in order)."""
