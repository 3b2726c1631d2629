import sys

from strict_loop.entry import main

sys.exit(main())
