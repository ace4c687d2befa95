"""A small training spec for the figure tests that vary its names (spec, input, loss, metric),
written from a dict so that YAML quotes any name ($, quotes, 800 characters) as it must."""
import yaml


def write_spec(path, name="short", inp="w", loss="loss", metric="acc"):
    doc = {"name": name, "seed": 0, "inputs": {inp: [1.0, 2.0]},
           "outputs": {loss: f"sum({inp} * {inp})"},
           "train": {"loss": loss, "optimizer": {"name": "sgd", "lr": 0.1}, "steps": 3,
                     "metrics": {metric: f"mean({inp})"}}}
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1 << 30))
    return path
