import sys

from mqconform.cli import main

sys.exit(main())
