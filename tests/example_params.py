"""Small parameter values for every shipped example kernel (fast builds and runs in the tests)."""

#: example file name -> parameter values
PARAMS = {
    "fdtd2d.c": {"T": 3, "NY": 10, "NX": 9},
    "gemm.c": {"NI": 9, "NJ": 10, "NK": 11},
    "heat3d.c": {"T": 2, "N": 8},
    "jacobi2d.c": {"T": 3, "N": 12},
    "lu.c": {"N": 10},
    "mvt.c": {"N": 12},
    "seidel2d.c": {"T": 3, "N": 12},
    "shift.c": {"N": 12, "M": 7},
    "sl3.sy": {"n": 12},
    "sweep2d.c": {"N": 12},
}
