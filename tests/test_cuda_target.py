"""The CUDA target (issue 28). Item 8: the program's text grows linearly with the program: the copy-bandwidth
probe chose the largest array with a ternary nested twice per array, so 30 arrays made a line of 2^30
copies (``--emit cuda`` exhausted 23 GB) and two shipped examples had lines of 2 to 8 MB. Item 9: a schedule
without a parallel loop runs on one GPU thread, and the run says so."""

from __future__ import annotations

import pytest

import polylab
from polylab.codegen import generate
from polylab.corpus import examples


def many_arrays(n: int) -> str:
    decls = "".join(f"double a{k}[N][N];\n" for k in range(n))
    body = " + ".join(f"a{k}[i][j]" for k in range(1, n))
    return decls + f"for (i = 1; i < N; i++)\n  for (j = 1; j < N; j++)\n    a0[i][j] = {body};\n"


def test_a_thirty_array_stencil_gives_short_lines_and_linear_text():
    sizes = {}
    for n in (15, 30):
        program = generate(polylab.parse(many_arrays(n)).scop, None, "cuda").program
        assert max(len(line) for line in program.splitlines()) < 2000
        sizes[n] = len(program)
    assert sizes[30] < 3 * sizes[15]  # linear (each array adds a few lines), not doubling per array


@pytest.mark.parametrize("name", [n for n in examples() if not n.startswith("stencil/")])
def test_no_shipped_example_has_a_long_line_of_cuda(name):
    try:
        scop = polylab.parse_file(polylab.example_path(name)).scop
    except polylab.errors.PolylabError:
        pytest.skip(f"{name} is not a single static control part")
    program = generate(scop, None, "cuda").program
    assert max(len(line) for line in program.splitlines()) < 4000, name


def test_run_says_a_cuda_schedule_without_a_parallel_loop_runs_on_one_gpu_thread(capsys):
    # issue 28, item 9: only a comment in the generated code said so; the run's text and JSON say it now,
    # whether or not this machine can run CUDA (with a GPU, after the run: "ran on one GPU thread")
    import json

    from polylab.cli import main
    from polylab.codegen.cuda import NO_PARALLEL_LOOP
    from polylab.experiment.timing import RAN_ON_ONE_GPU_THREAD

    main(["run", "sweep2d.c", "--target", "cuda", "--param", "N=8", "--repeat", "1", "--json"])
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert NO_PARALLEL_LOOP in warnings or RAN_ON_ONE_GPU_THREAD in warnings
    main(["run", "sweep2d.c", "--target", "cuda", "--param", "N=8", "--repeat", "1"])
    out = capsys.readouterr().out
    assert f"warning: {NO_PARALLEL_LOOP}" in out or f"warning: {RAN_ON_ONE_GPU_THREAD}" in out
    main(["run", "sweep2d.c", "--target", "cuda", "--schedule", "wavefront", "--param", "N=8", "--repeat", "1",
          "--json"])
    assert not json.loads(capsys.readouterr().out).get("warnings")  # a parallel loop: nothing to say
