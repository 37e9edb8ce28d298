"""Claims judged on a board's variants: the statistics, the claim rules, the random-key null and the tuning rule."""
