"""bench/'s own tools: the scripts' --json and --update-readme output, and compare.py's side-by-side table."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

import _common  # noqa: E402
import compare  # noqa: E402

SCRIPT = """
import argparse, sys
sys.path.insert(0, {bench!r})
from pathlib import Path
from _common import Output, add_output_options

parser = argparse.ArgumentParser()
parser.add_argument("--fail", action="store_true")
add_output_options(parser)
args = parser.parse_args()
with Output("bench_toy.py", args, readme=Path({readme!r})) as out:
    print("toy report: 2.00 ratio")
    out.figure("toy rate", 123.0, "events/s")
    out.figure("toy seconds", 4.5, "s", "lower")
    if args.fail:
        raise SystemExit(3)
"""


def readme(tmp_path: Path) -> Path:
    path = tmp_path / "README.md"
    path.write_text(
        "# intro\n\n<!-- bench_toy.py: begin -->\nold figures\n<!-- bench_toy.py: end -->\n\n"
        "<!-- bench_other.py: begin -->\nother figures\n<!-- bench_other.py: end -->\nafter\n"
    )
    return path


def run_toy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "bench_toy.py"
    script.write_text(SCRIPT.format(bench=str(BENCH), readme=str(tmp_path / "README.md")))
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)


def test_every_benchmark_has_its_section_in_the_readme() -> None:
    text = (BENCH / "README.md").read_text()
    for script in sorted(BENCH.glob("bench_*.py")):
        begin, end = _common._markers(script.name)
        assert text.count(begin) == 1 and text.count(end) == 1, script.name
        assert "add_output_options(parser)" in script.read_text(), f"{script.name} takes no --json/--update-readme"


def test_json_puts_only_the_figures_on_stdout(tmp_path: Path) -> None:
    readme(tmp_path)
    out = run_toy(tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "benchmark": "bench_toy.py",
        "figures": {
            "toy rate": {"value": 123.0, "unit": "events/s", "better": "higher"},
            "toy seconds": {"value": 4.5, "unit": "s", "better": "lower"},
        },
    }
    assert "toy report" in out.stderr


def test_update_readme_rewrites_only_its_own_section(tmp_path: Path) -> None:
    path = readme(tmp_path)
    out = run_toy(tmp_path, "--update-readme")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "toy report: 2.00 ratio"  # still printed as usual
    text = path.read_text()
    assert "old figures" not in text
    section = text.split("<!-- bench_toy.py: begin -->\n")[1].split("<!-- bench_toy.py: end -->")[0]
    assert section.startswith("Latest run: ")
    assert "`python bench/bench_toy.py`" in section and "CPUs" in section
    assert "```text\ntoy report: 2.00 ratio\n```\n" in section
    assert text.startswith("# intro\n\n") and text.endswith(
        "<!-- bench_other.py: begin -->\nother figures\n<!-- bench_other.py: end -->\nafter\n"
    )


def test_a_failed_run_writes_nothing(tmp_path: Path) -> None:
    path = readme(tmp_path)
    before = path.read_text()
    out = run_toy(tmp_path, "--update-readme", "--json", "--fail")
    assert out.returncode == 3
    assert out.stdout == ""
    assert path.read_text() == before


def test_a_readme_without_the_markers_is_an_error_naming_them(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_text("no markers\n")
    with pytest.raises(SystemExit, match=re.escape("<!-- bench_toy.py: begin -->")):
        _common.write_section("bench_toy.py", "figures", path)
    assert path.read_text() == "no markers\n"


def test_compare_runs_a_benchmark_and_reads_its_figures(tmp_path: Path) -> None:
    script = tmp_path / "bench_toy.py"
    script.write_text(
        "import json, sys\nprint('a JVM chatting on stdout')\n"
        "print(json.dumps({'benchmark': 'bench_toy.py', 'figures': {'x': "
        "{'value': float(sys.argv[1]), 'unit': 's', 'better': 'lower'}}}))\n"
    )
    assert compare.run_once(script, ["2.5"], ROOT) == {"x": {"value": 2.5, "unit": "s", "better": "lower"}}


def test_compare_prints_medians_and_the_median_of_the_rounds_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    def figures(value: float) -> compare.Figures:
        return {"rate": {"value": value, "unit": "events/s", "better": "higher"}}

    base = [figures(100), figures(200), figures(100)]
    new = [figures(110), figures(180), figures(130)]  # ratios 1.10, 0.90, 1.30
    compare.table(Path("bench_toy.py"), [], base, new)
    line = capsys.readouterr().out.splitlines()[-1].split()
    assert line == ["rate", "events/s", "100", "130", "1.10", "(0.90-1.30)", "higher"]


def test_compare_names_the_benchmarks_and_their_arguments() -> None:
    (script, args), *_ = compare.parse_benchmarks(["runtime:--messages 50000 --rounds 1"])
    assert script == BENCH / "bench_runtime.py" and args == ["--messages", "50000", "--rounds", "1"]
    assert [s.name for s, _ in compare.parse_benchmarks([])] == [f"bench_{n}.py" for n in compare.DEFAULT]
    with pytest.raises(SystemExit, match=r"the benchmarks are: .*runtime"):
        compare.parse_benchmarks(["nosuch"])


def test_compare_refuses_a_tree_whose_code_python_would_not_import(tmp_path: Path) -> None:
    compare.check_imports(ROOT)
    with pytest.raises(SystemExit, match="PYTHONPATH="):
        compare.check_imports(tmp_path)


#: A speed figure in prose: a ratio ("1.5x", "3 times as fast"), a rate ("events/s", "calls a second") or
#: microseconds. Sizes, timeouts and counts are settings or facts, not measurements, and are not matched.
FIGURE = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?"
    r"(?:x\b|\u00d7|times\b(?= (?:as|faster|slower|sooner|more|less|the)\b)|µs\b|us\b"
    r"|(?:events|messages|calls)(?:/s\b| a second\b| per (?:CPU )?second\b))"
)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
SECTION = re.compile(r"<!-- (bench_\w+\.py): begin -->\n.*?<!-- \1: end -->", re.DOTALL)


def prose_figures(text: str, printed: set[str]) -> list[str]:
    """The speed figures of ``text``, outside the scripts' sections, whose number no script printed."""
    return [m.group(0) for m in FIGURE.finditer(SECTION.sub("", text)) if m.group(1) not in printed]


def test_a_figure_no_script_printed_is_found() -> None:
    assert prose_figures("decoding is 4.7 times as fast, 3.5 us a message, at 1,200 events/s", {"1,200"}) == [
        "4.7 times",
        "3.5 us",
    ]
    text = "<!-- bench_toy.py: begin -->\nruns 9.9x as fast\n<!-- bench_toy.py: end -->\nruns 2.5x"
    assert prose_figures(text, set()) == ["2.5x"]


def test_the_docs_quote_only_figures_the_benchmarks_printed() -> None:
    """README.md and docs/ may restate a figure of bench/README.md's latest runs, and no other."""
    printed = {n for s in SECTION.finditer((BENCH / "README.md").read_text()) for n in NUMBER.findall(s.group(0))}
    found = {
        str(path.relative_to(ROOT)): figures
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        if (figures := prose_figures(path.read_text(), printed))
    }
    assert found == {}, "figures that no section of bench/README.md prints (rerun the script, or drop them)"
