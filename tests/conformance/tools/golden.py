"""Case records and their JSON encoding (element bits in hex, so NaN payloads and -0 survive)."""
import json
import os

import numpy as np

NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32, "bool": np.bool_}
BITS = {"f32": (np.uint32, 8), "f64": (np.uint64, 16), "i32": (np.uint32, 8), "u32": (np.uint32, 8)}


def encode(dtype, arr):
    a = np.array(arr, dtype=NP[dtype], order="C")  # keeps 0-d scalars 0-d
    if dtype == "bool":
        data = " ".join("1" if v else "0" for v in a.ravel())
    else:
        view, width = BITS[dtype]
        data = " ".join(format(int(v), f"0{width}x") for v in a.view(view).ravel())
    return {"dtype": dtype, "shape": list(a.shape), "data": data}


def tol_exact():
    return {"ulp": 0}


def tol_ulp(n):
    return {"ulp": n}


def tol_close(rtol, atol):
    return {"rtol": rtol, "atol": atol}


def case(name, program, inputs, expected, tols, note=""):
    """inputs: [(dtype, array)], expected: [(dtype, array)], tols: one per output."""
    if not isinstance(tols, list):
        tols = [tols] * len(expected)
    return {
        "name": name,
        "note": note,
        "program": program.text,
        "requires": {"ops": sorted(program.ops), "dtypes": sorted(program.dtypes)},
        "inputs": [encode(d, a) for d, a in inputs],
        "expected": [dict(encode(d, a), tol=t) for (d, a), t in zip(expected, tols)],
    }


def write_groups(out_dir, groups):
    n = 0
    for rel, cases in groups.items():
        path = os.path.join(out_dir, rel + ".json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names)), f"duplicate case names in {rel}"
        with open(path, "w") as f:
            json.dump({"cases": cases}, f, indent=1, sort_keys=True)
            f.write("\n")
        n += len(cases)
    return n
