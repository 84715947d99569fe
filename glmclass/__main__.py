"""``python -m glmclass``: see :mod:`glmclass.cli`."""

import sys

from .cli import main

sys.exit(main())
