"""``python -m vexl_compiler ARGS`` runs the bundled vexlc."""

import sys

from vexl_compiler._cli import main

sys.exit(main())
