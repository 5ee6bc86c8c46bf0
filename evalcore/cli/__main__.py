"""``python -m evalcore.cli``: the same as the ``evalcore`` command."""

import sys

from evalcore.cli import main

sys.exit(main())
