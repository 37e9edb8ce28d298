"""``python -m normbench.boards.replicates [RESULTS_DIR]``: write ``RESULTS_DIR/reproducibility.{md,json}``
(:func:`normbench.boards.replicates.report.write_report`; ``results`` by default)."""

import sys

from normbench.boards.replicates.report import write_report

if __name__ == "__main__":  # python -m normbench.boards.replicates [RESULTS_DIR]
    print(f"normbench: wrote {write_report(sys.argv[1] if len(sys.argv) > 1 else 'results')}")
