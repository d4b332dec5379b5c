"""``reports.paper_figures`` on the fixture store: three non-empty figures."""

from PIL import Image
from tests_paths import FIXTURE_POOL

from reports.paper_figures import main


def test_three_figures_are_drawn(tmp_path, capsys):
    assert main(["--pool", FIXTURE_POOL, "--out", str(tmp_path)]) == 0
    names = {"delta_ci.png", "welch_vs_signflip.png", "learning_curves.png"}
    assert {p.name for p in tmp_path.glob("*.png")} == names
    for name in names:
        with Image.open(tmp_path / name) as img:
            colours = img.convert("L").getcolors(maxcolors=1 << 16)
            assert img.width > 300 and colours is not None and len(colours) > 10
    assert capsys.readouterr().out.count("wrote") == 3
