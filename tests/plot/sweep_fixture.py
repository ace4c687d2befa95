"""A small sweep results directory written by hand (spec-v2 "Sweeps"), with known numbers.

Three seeds × three learning rates × two sign rules; run 0005 failed (an error cell and an
"error" in its JSON), run 0010 diverged (final_loss NaN). `write_sweep` returns the numbers
it wrote so tests compute their expectations with numpy on these, not through gradcli.
"""
import csv
import json

import numpy as np

SEEDS = [0, 1, 2]
LRS = ["0.01", "0.1", "1.0"]
SIGNS = ["identity", "hardtanh"]
KEYS = ["seed", "train.optimizer.lr", "override_map.sign"]
COLUMNS = ["final_loss", "final.accuracy.train", "final.accuracy.test",
           "y/x.cosine", "y/x.max_abs_diff", "y/x.sign_agreement"]
FAILED, DIVERGED = "0005", "0010"
SPEC = """name: NAME
inputs: {x: [0.5, -1.5, 2.0]}
outputs:
  y: sum(sign(x) * x)
override_map: {sign: identity}
sweep:
  seed: [0, 1, 2]
  train.optimizer.lr: [0.01, 0.1, 1.0]
  override_map.sign: [identity, hardtanh]
"""


def write_sweep(root, name: str = "ste-lr", error_column: bool = True, columns=COLUMNS,
                gradcli_meta: bool = True) -> list:
    """Write sweep.json (as gradcli sweep writes it, or a minimal one: the grid and the
    spec's text), runs/<id>.json and results.csv (with these columns) under root;
    return the rows (dicts of the params, the column values as floats, the gradients,
    failed or not)."""
    rng = np.random.default_rng(12)
    (root / "runs").mkdir(parents=True, exist_ok=True)
    grid = {"seed": SEEDS, "train.optimizer.lr": [float(v) for v in LRS],
            "override_map.sign": SIGNS}
    text = SPEC.replace("NAME", json.dumps(name))
    runs = [{"run": f"{k:04d}", "params": {"seed": s, "train.optimizer.lr": float(lr),
                                         "override_map.sign": g}}
            for k, (s, lr, g) in enumerate((s, lr, g) for s in SEEDS for lr in LRS for g in SIGNS)]
    meta = ({"format": "gradcli-sweep-1", "spec": "ste-lr.yaml", "spec_text": text, "keys": KEYS,
             "runs": runs} if gradcli_meta else {"grid": grid, "spec": text})
    (root / "sweep.json").write_text(json.dumps(meta))
    rows, k = [], 0
    for seed in SEEDS:
        for lr in LRS:
            for sign in SIGNS:
                run = f"{k:04d}"
                base = float(lr) * (1.0 if sign == "identity" else 0.5)
                values = {"final_loss": base + rng.normal(0, 0.1),
                          "final.accuracy.train": 0.5 + 0.1 * rng.random() + (sign == "hardtanh") * 0.2,
                          "final.accuracy.test": 0.4 + 0.1 * rng.random(),
                          "y/x.cosine": 1.0 - rng.random() * base,
                          "y/x.max_abs_diff": rng.random() * 2,
                          "y/x.sign_agreement": float(rng.integers(1, 4)) / 3}
                if run == DIVERGED:
                    values["final_loss"] = float("nan")
                over = rng.normal(size=3) + base
                true = rng.normal(size=3)
                failed = run == FAILED
                params = {"seed": seed, "train.optimizer.lr": float(lr), "override_map.sign": sign}
                doc = ({"error": "boom: the run failed", "exit_code": 2, "params": params} if failed
                       else {"name": name, "params": params, "gradients": {"y": {"x": {
                           "overridden": over.tolist(), "true": true.tolist(), "numeric": None,
                           "numeric_kind": "skipped"}}}})
                (root / "runs" / f"{run}.json").write_text(json.dumps(doc))
                rows.append({"run": run, "seed": str(seed), "train.optimizer.lr": lr,
                             "override_map.sign": sign, "values": values, "over": over,
                             "true": true, "failed": failed})
                k += 1
    with open(root / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["run", *KEYS, *columns] + ["error"] * error_column)
        for r in rows:
            cells = ["" if r["failed"] else repr(r["values"][c]) for c in columns]
            writer.writerow([r["run"], *(r[key] for key in KEYS), *cells]
                            + (["boom: the run failed" if r["failed"] else ""] * error_column))
    return rows
