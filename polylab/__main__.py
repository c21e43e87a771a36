import sys

from polylab.cli import main

sys.exit(main())
