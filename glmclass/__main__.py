"""``python -m glmclass``: see :mod:`glmclass.cli`."""

import sys

from .cli import main

if __name__ == "__main__":  # importing the module (as Sphinx's autosummary does) runs nothing
    sys.exit(main())
