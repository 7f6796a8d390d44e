#!/bin/sh
# hostile.sh - runs the hostile-input suite (tests/hostile/hostile.py) on $HSDAG for tests/run.sh.
# Not here: the cases (hostile.py) or their generators (gen.py).
exec python3 tests/hostile/hostile.py "${HSDAG:-build/hsdag}"
