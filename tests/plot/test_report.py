"""gradcli report: one self-contained HTML page; spec text escaped; opened in a real browser."""
import base64
import html
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from blobs_fixture import blobs_spec
from click.testing import CliRunner
from sweep_fixture import write_sweep

from gradcli.cli import cli

ROOT = Path(__file__).parent.parent.parent
STE = str(ROOT / "experiments" / "ste_sign_quantize_grad.yaml")
CLIP = str(ROOT / "experiments" / "clip_by_norm_sgd_step.yaml")
EVIL = "<script>alert(1)</script>"
EVIL_SPEC = f"""
name: "{EVIL}"
description: "<img src=x onerror=alert(2)> & <b>bold</b>"
inputs: {{x: [1.0, -2.0]}}
outputs:
  y: x * x
"""
BIG_SPEC = "name: big\ninputs: {x: {uniform: [-1, 1], shape: [100]}}\noutputs:\n  y: tanh(x)\n"


def write_report(tmp_path, *specs) -> tuple[int, str, str]:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", *map(str, specs), "--output", str(out)])
    return result.exit_code, result.stderr, out.read_text(encoding="utf-8") if out.exists() else ""


def images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)]


def test_the_page_is_self_contained_with_every_part(tmp_path):
    code, err, page = write_report(tmp_path, STE, CLIP)
    assert code == 0, err
    assert "<script" not in page and "<link" not in page and "http://" not in page.replace(
        "http://www.w3.org", "")  # nothing fetched: no script, stylesheet or remote URL
    assert re.findall(r"<img [^>]*src=\"([a-z]+):", page) == ["data"] * len(images(page))
    # STE: a curve for x and w (y is a scalar); CLIP: the training curve and curves for w, x
    assert len(images(page)) == 2 + 3
    for svg in images(page):
        assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    for text in ("backend <b>numpy</b>", "float64", "seed 0", "override <code>sign</code> → "
                 "<code>QuantizeGrad</code>: 1 op", "gradients of y", "overridden (o) vs true (t)",
                 "training (1 step, loss loss)", "expect: passed", "<caption>values</caption>"):
        assert text in page, text
    # the STE's overridden gradient of x, element [1] (2 where the true one is 0), is flagged
    assert '<td class="differs">2</td>' in page


def test_long_tensors_are_summarized_as_in_the_terminal(tmp_path):
    spec = tmp_path / "big.yaml"
    spec.write_text(BIG_SPEC)
    code, err, page = write_report(tmp_path, spec)
    assert code == 0, err
    assert re.search(r"<td class=\"\">min -?[0-9.]+ +max [0-9.]+ +mean -?[0-9.e-]+</td>", page)
    assert ">norm<" in page and ">mean<" in page
    assert page.count("<tr>") < 40  # not 100 rows per tensor


def test_a_spec_cannot_inject_markup(tmp_path):
    spec = tmp_path / "evil.yaml"
    spec.write_text(EVIL_SPEC)
    code, err, page = write_report(tmp_path, spec)
    assert code == 0, err
    assert "<script" not in page and "onerror=alert" not in page.replace(
        "onerror=alert(2)&gt;", "")
    assert html.escape(EVIL) in page
    assert "&lt;img src=x onerror=alert(2)&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "script-src" not in page and "default-src 'none'" in page  # CSP: no script at all


def test_control_characters_in_spec_text_are_shown_escaped(tmp_path):
    spec = tmp_path / "ctl.yaml"
    spec.write_text('name: "evil\\e[31mRED\\u202e\\a"\ndescription: "title\\e]0;pwned\\a"\n'
                    "inputs: {x: [1.0, -2.0]}\noutputs:\n  y: x * x\n")
    code, err, page = write_report(tmp_path, spec)
    assert code == 0, err
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", page)
    assert "evil\\x1b[31mRED\\u202e\\x07" in page and "title\\x1b]0;pwned\\x07" in page
    assert "Glyph" not in err  # the figures' titles get the escaped name too


def test_non_finite_values_get_their_note(tmp_path):
    spec = tmp_path / "log.yaml"
    spec.write_text("name: logs\ninputs: {x: [0.0, 1.0]}\noutputs:\n  y: log(x)\n")
    code, err, page = write_report(tmp_path, spec)
    assert code == 0, err
    assert "<h3>non-finite values</h3>" in page
    note = page.split("<h3>non-finite values</h3>")[1].split("</pre>")[0]
    assert "-inf" in note and "log(x)" in note
    assert '<td class="bad">[-inf,' in page and '<td class="bad">inf</td>' in page  # tables mark it


def test_a_bad_spec_is_reported_in_the_page_and_the_others_still_run(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ninputs: {x: 1.0}\noutputs:\n  y: nosuchop(x)\n")
    code, err, page = write_report(tmp_path, bad, STE)
    assert code == 2
    assert "nosuchop" in err and 'class="error"' in page and "ste-sign-quantize-grad" in page


# ----- in a real browser: headless Chromium, network off, file:// -----
def browser() -> str | None:
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(b)), None)


def chromium(url: str, *extra: str) -> subprocess.CompletedProcess:
    profile = tempfile.mkdtemp(prefix="gradcli-chromium-")
    try:
        return subprocess.run(
            [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--proxy-server=http://127.0.0.1:9",  # every fetch fails
             "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0",
             "--allow-file-access-from-files", "--virtual-time-budget=5000", *extra, url],
            capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


HARNESS = """<!DOCTYPE html><html><body><iframe id="r" src="report.html" width="1200" height="900">
</iframe><pre id="out">pending</pre><script>
document.getElementById('r').addEventListener('load', () => {
  const d = document.getElementById('r').contentDocument;
  const imgs = [...d.images];
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0 && i.naturalHeight > 0).length;
  document.getElementById('out').textContent = 'images ' + imgs.length + ' loaded ' + ok +
    ' tables ' + d.querySelectorAll('table').length + ' scripts ' + d.scripts.length +
    ' title ' + JSON.stringify(d.querySelector('h2') && d.querySelector('h2').textContent);
});
</script></body></html>"""


@pytest.fixture
def real_browser():
    if browser() is None:
        pytest.skip("no Chromium could be installed on this machine (.ci/run installs Debian's "
                    "chromium when it can): the browser test cannot run")
    return browser()


def rendered(tmp_path, *specs) -> tuple[str, str]:
    """(the harness's findings, the browser's console lines) for the report of specs."""
    code, err, _ = write_report(tmp_path, *specs)
    assert code == 0, err
    (tmp_path / "harness.html").write_text(HARNESS)
    shot = tmp_path / "shot.png"
    direct = chromium((tmp_path / "report.html").as_uri(), f"--screenshot={shot}",
                      "--window-size=1200,3000")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    console = [line for line in direct.stderr.splitlines() if "CONSOLE" in line]
    found = chromium((tmp_path / "harness.html").as_uri(), "--dump-dom")
    out = re.search(r'<pre id="out">([^<]*)</pre>', found.stdout)
    return html.unescape(out.group(1)) if out else found.stdout[-2000:], "\n".join(console)


def test_the_browser_renders_every_figure_and_table_offline(tmp_path, real_browser):
    findings, console = rendered(tmp_path, STE, CLIP)
    assert findings.startswith("images 5 loaded 5 tables 7 scripts 0"), findings
    assert console == ""


def test_in_the_browser_a_spec_named_script_runs_nothing(tmp_path, real_browser):
    spec = tmp_path / "evil.yaml"
    spec.write_text(EVIL_SPEC)
    findings, console = rendered(tmp_path, spec)
    assert "scripts 0" in findings, findings
    assert f"title {EVIL!r}".replace("'", '"') in findings  # shown as text
    assert "alert" not in console and console == ""


# ----- a sweep directory (spec-v2 "Sweeps"), written by hand: tests/plot/sweep_fixture.py -----
FEW = ["final_loss", "final.accuracy.test", "y/x.sign_agreement"]  # 3 columns: 6 figures, quicker


def cell(mean: float, std: float) -> str:
    return f"{mean:.4g} ± {std:.3g}"


def test_a_sweep_report_holds_the_grouped_table_gradient_statistics_and_plots(tmp_path):
    rows = write_sweep(tmp_path / "sw", columns=FEW)
    code, err, page = write_report(tmp_path, tmp_path / "sw")
    assert code == 0, err
    assert "<script" not in page and "<link" not in page and "1 sweep," in page
    # 3 numeric columns against each swept key but seed (lr hued by sign, sign hued by lr)
    assert len(images(page)) == 6
    for svg in images(page):
        assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert "18 runs" in page and "1 failed" in page and "run <code>0005</code>: boom" in page
    ok = [r for r in rows if not r["failed"]]
    group = [r for r in ok if r["train.optimizer.lr"] == "0.1" and r["override_map.sign"] == "identity"]
    table = page.split("groups: mean ± std")[1].split("</table>")[0]
    row = table.split('<td class="name">0.1</td><td class="name">identity</td>')[1].split("</tr>")[0]
    for column in ("final_loss", "final.accuracy.test", "y/x.sign_agreement"):
        values = np.array([r["values"][column] for r in group])
        assert f"<td>{cell(values.mean(), values.std(ddof=1))}</td>".replace("<td>", '<td class="">') in row
    # lr 1.0 identity: the diverged run (NaN final_loss) is out of the mean and counted
    diverged = [r["values"]["final_loss"] for r in ok if r["train.optimizer.lr"] == "1.0"
                and r["override_map.sign"] == "identity"]
    finite = np.array([v for v in diverged if np.isfinite(v)])
    assert f"{cell(finite.mean(), finite.std(ddof=1))} (n=2, 1 non-finite)" in table
    grads = page.split("overridden gradient g over the runs")[1].split("</table>")[0]
    g = np.stack([r["over"] for r in group]).mean(0)
    t = np.stack([r["true"] for r in group]).mean(0)
    assert f"<td class=\"\">{np.linalg.norm(g):.4g}</td>" in grads
    assert f"<td class=\"\">{np.linalg.norm(g - t):.4g}</td>" in grads
    assert "<details><summary>the spec</summary><pre>name: &quot;ste-lr&quot;" in page


def sweep_with_sign_agreement(root, value_of) -> None:
    """A FEW-column sweep whose y/x.sign_agreement in row k is value_of(k) (text)."""
    import csv
    write_sweep(root, columns=FEW)
    with open(root / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    for k, row in enumerate(table):
        row["y/x.sign_agreement"] = "" if row["error"] else value_of(k)
    with open(root / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)


def test_a_column_that_is_the_same_in_every_run_is_said_not_drawn(tmp_path):
    sweep_with_sign_agreement(tmp_path / "sw", lambda k: "1.0")
    code, err, page = write_report(tmp_path, tmp_path / "sw")
    assert code == 0, err
    assert len(images(page)) == 4  # final_loss and final.accuracy.test against lr and sign
    assert "the same in every run: <code>y/x.sign_agreement</code> = 1</p>" in page


def test_a_spec_and_a_sweep_share_one_page_and_a_bad_dir_is_an_error_beside_them(tmp_path):
    write_sweep(tmp_path / "sw", columns=FEW)
    (tmp_path / "notasweep").mkdir()
    code, err, page = write_report(tmp_path, STE, tmp_path / "sw", tmp_path / "notasweep")
    assert code == 2 and "not a sweep directory: it has no sweep.json" in err
    assert "1 spec, 2 sweeps," in page and "<h2>ste-sign-quantize-grad</h2>" in page
    assert "<h2>ste-lr</h2>" in page and 'class="error"' in page


def test_a_sweep_report_cannot_replace_the_sweeps_results(tmp_path):
    write_sweep(tmp_path / "sw", columns=FEW)
    before = (tmp_path / "sw" / "results.csv").read_bytes()
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "sw"), "--output",
                                      str(tmp_path / "sw" / "results.csv")])
    assert result.exit_code == 2 and (tmp_path / "sw" / "results.csv").read_bytes() == before
    assert "is the results.csv of the sweep" in result.stderr


def evil_sweep(root) -> None:
    """A sweep of a spec named <script>..., with markup in a swept value and an error."""
    write_sweep(root, name=EVIL, columns=FEW)
    csv = (root / "results.csv").read_text()
    (root / "results.csv").write_text(csv.replace("hardtanh", "<img src=x onerror=alert(3)>")
                                      .replace("boom: the run failed", "<script>alert(4)</script>"))


def test_a_sweep_cannot_inject_markup(tmp_path):
    evil_sweep(tmp_path / "sw")
    code, err, page = write_report(tmp_path, tmp_path / "sw")
    assert code == 0, err
    assert "<script" not in page and "<img src=x" not in page
    assert f"<h2>{html.escape(EVIL)}</h2>" in page and "&lt;img src=x onerror=alert(3)&gt;" in page
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in page


def test_the_browser_renders_a_sweep_report_offline(tmp_path, real_browser):
    write_sweep(tmp_path / "sw", columns=FEW)
    findings, console = rendered(tmp_path, tmp_path / "sw")
    assert findings.startswith('images 6 loaded 6 tables 2 scripts 0 title "ste-lr"'), findings
    assert console == ""


def test_in_the_browser_a_sweep_named_script_runs_nothing(tmp_path, real_browser):
    evil_sweep(tmp_path / "sw")
    findings, console = rendered(tmp_path, tmp_path / "sw")
    assert findings.startswith("images 6 loaded 6 tables 2 scripts 0"), findings
    assert f"title {EVIL!r}".replace("'", '"') in findings
    assert "alert" not in console and console == ""


def test_the_training_figure_has_every_metric_on_both_parts(tmp_path):
    """A spec trained on data with a metric: the report's training figure draws the loss and
    the metric on the training and the test part (plot.train.record_series)."""
    spec = blobs_spec(tmp_path)
    code, err, page = write_report(tmp_path, spec)
    assert code == 0, err
    assert "training loss and metrics per step on numpy" in page
    (train,) = [svg for svg in images(page) if b'id="accuracy:' in svg]
    for gid in (b'id="loss (loss):numpy"', b'id="accuracy:numpy (train)"', b'id="accuracy:numpy (test)"'):
        assert gid in train, gid


def test_a_column_varying_only_by_rounding_is_said_not_drawn(tmp_path):
    below = float(np.nextafter(1.0, 0.0))  # 0.9999999999999999: one ulp under 1
    sweep_with_sign_agreement(tmp_path / "sw", lambda k: repr(1.0 if k % 2 else below))
    code, err, page = write_report(tmp_path, tmp_path / "sw")
    assert code == 0, err
    assert len(images(page)) == 4  # as when the column is exactly 1 everywhere
    assert ("<code>y/x.sign_agreement</code> = 1 (differing by rounding only: "
            "0.9999999999999999 … 1.0)</p>") in page


def test_a_spec_error_keeps_its_caret_under_the_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ninputs: {x: 1.0}\noutputs:\n  y: summ(x)\n")
    code, err, page = write_report(tmp_path, bad, STE)
    assert code == 2
    block = html.unescape(page.split('<pre class="error">')[1].split("</pre>")[0])
    lines = block.splitlines()
    source = next(k for k, line in enumerate(lines) if line.strip() == "y: summ(x)")
    assert lines[source + 1].index("^") == lines[source].index("summ")  # 4:6, as the message says
    assert ":4:6:" in lines[0]
