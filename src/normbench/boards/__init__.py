"""Run records to a Board: what a board shows (canonical, published and in-progress runs) and the norm leaderboard."""
