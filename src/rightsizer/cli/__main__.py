"""`python -m rightsizer.cli`: the console script `rightsizer` without installing it."""

import sys

from rightsizer.cli.main import main

sys.exit(main())
