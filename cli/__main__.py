"""``python -m cli``: the ``offsetguard`` command line."""

import sys

from cli.main import main

sys.exit(main())
