"""`python -m longqa.cli ARGS`: the `longqa` command (longqa/cli/entry.py)."""

import sys

from longqa.cli.entry import main

sys.exit(main())
