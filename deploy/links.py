"""nbgitpuller links that hand out the labs: ``python deploy/links.py https://hub.example.edu
https://github.com/ORG/polylab-labs [--branch main]`` prints one link per lab.

A link opens the student's server on the hub, clones the labs repository into their home the first time,
and on later clicks merges the instructor's new commits without overwriting the student's changes (that is
nbgitpuller's rule: a file the student changed is kept; a file they deleted comes back), then opens the lab.

Publish only the student release: ``labs/`` without ``solutions/`` or ``instructor/``, e.g. a branch of its
own made from the folder (``git subtree split --prefix labs -b labs-release``, pushed to a public
repository); the link's repository is that one, and the notebooks are at its top level.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[1]


def link(hub: str, repo: str, notebook: str, branch: str = "main") -> str:
    """The nbgitpuller link that pulls ``repo`` (``branch``) and opens ``notebook`` in JupyterLab."""
    folder = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    query = urlencode({"repo": repo, "branch": branch, "urlpath": f"lab/tree/{folder}/{notebook}"}, quote_via=quote)
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("hub", help="the hub's address, e.g. https://hub.example.edu")
    p.add_argument("repo", help="the public repository of the labs (the student release)")
    p.add_argument("--branch", default="main")
    args = p.parse_args(argv)
    for nb in sorted((ROOT / "labs").glob("*.ipynb")):
        print(f"{nb.stem}: {link(args.hub, args.repo, nb.name, args.branch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
