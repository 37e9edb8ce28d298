"""``python -m normbench ...`` is the ``normbench`` command."""

from normbench.cli import main

if __name__ == "__main__":
    main()
