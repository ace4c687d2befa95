"""A sweep results directory whose run files hold training curves, written by hand.

Three seeds × two sign rules × two learning rates, 12 steps each, the accuracy evaluated at
steps 0, 4, 8, 12. Run 0003 (seed 0, hardtanh, lr 0.1) stopped at step 6 on a NaN loss (it
keeps its result: 7 losses, the last NaN, and metrics up to step 4); run 0006 (seed 1,
hardtanh, lr 0.01) failed with an error and has no result. Tests compute what they expect
from these files with json and numpy only.
"""
import csv
import json

import numpy as np

SEEDS = [0, 1, 2]
SIGNS = ["identity", "hardtanh"]
LRS = ["0.01", "0.1"]
KEYS = ["seed", "override_map.sign", "train.optimizer.lr"]
STEPS, EVAL = 12, [0, 4, 8, 12]
STOPPED, FAILED = "0003", "0006"
SPEC = "name: curves\ninputs: {x: [1.0]}\noutputs:\n  y: sum(x)\n"


def write_curves(root) -> None:
    rng = np.random.default_rng(7)
    (root / "runs").mkdir(parents=True)
    runs, docs = [], []
    for k, (seed, sign, lr) in enumerate((s, g, lr) for s in SEEDS for g in SIGNS for lr in LRS):
        run = f"{k:04d}"
        params = {"seed": seed, "override_map.sign": sign, "train.optimizer.lr": float(lr)}
        runs.append({"run": run, "params": params})
        if run == FAILED:
            doc = {"run": run, "params": params, "error": "boom", "exit_code": 2}
        else:
            rate = float(lr) * (3 if sign == "identity" else 1)
            loss = (2.0 * np.exp(-rate * np.arange(STEPS)) + rng.normal(0, 0.05, STEPS)).tolist()
            acc = {part: (0.3 + 0.05 * np.arange(len(EVAL)) + rng.random(len(EVAL)) * 0.3).tolist()
                   for part in ("train", "test")}
            steps, evals, stopped = STEPS, EVAL, None
            if run == STOPPED:
                loss = loss[:6] + ["NaN"]
                acc = {part: v[:2] for part, v in acc.items()}
                steps, evals, stopped = 6, EVAL[:2], {"step": 6, "reason": "non-finite loss"}
            doc = {"run": run, "params": params, "name": "curves",
                   "train": {"loss": loss, "steps": steps, "eval_steps": evals,
                             "metrics": {"accuracy": acc},
                             "final": {"loss": 0.1, "accuracy": {p: v[-1] for p, v in acc.items()}},
                             "stopped": stopped}}
            if run == STOPPED:
                doc["error"], doc["exit_code"] = "training stopped at step 6", 1
        (root / "runs" / f"{run}.json").write_text(json.dumps(doc))
        docs.append(doc)
    (root / "sweep.json").write_text(json.dumps({"format": "gradcli-sweep-1", "spec_text": SPEC,
                                                 "keys": KEYS, "runs": runs}))
    with open(root / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["run", *KEYS, "final_loss", "final.accuracy.train",
                         "final.accuracy.test", "error"])
        for doc in docs:
            p = doc["params"]
            cells = (["", "", ""] if "train" not in doc else
                     [repr(doc["train"]["final"]["loss"]),
                      repr(doc["train"]["final"]["accuracy"]["train"]),
                      repr(doc["train"]["final"]["accuracy"]["test"])])
            writer.writerow([doc["run"], p["seed"], p["override_map.sign"],
                             repr(p["train.optimizer.lr"]), *cells, doc.get("error", "")])
