"""Runs one command under a time limit and records its outcome as JSON (a helper of tests/conftest.py).

``python tests/course_grading.py RECORD SECONDS COMMAND...``: the record ``{"args", "returncode", "stdout",
"stderr", "seconds"}`` is written to ``RECORD`` by rename once the command has ended (or was stopped at the
limit: returncode -9 and the reason in stderr), so a reader never sees half of it.
"""

import json
import os
import subprocess
import sys
import time


def main(record: str, seconds: str, *command: str) -> None:
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=float(seconds))
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as stopped:
        code, out, err = -9, str(stopped.stdout or ""), f"stopped after {seconds} s"
    data = {"args": list(command), "returncode": code, "stdout": out, "stderr": err,
            "seconds": time.monotonic() - start}
    with open(record + ".part", "w") as f:
        json.dump(data, f)
    os.replace(record + ".part", record)


if __name__ == "__main__":
    main(*sys.argv[1:])
