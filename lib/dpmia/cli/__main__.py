"""``python -m dpmia.cli``: the ``dpmia`` command."""

import sys

from . import main

sys.exit(main())
