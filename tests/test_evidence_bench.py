"""The evidence page says what the machine did while the linker's runs were timed, from the figure it measured."""

from benchmarks.evidence_bench import sharing


def test_the_page_says_whether_the_machine_was_otherwise_idle():
    assert sharing({"others_percent_of_one_core": 3}) == "otherwise idle (other programs used 3% of one core meanwhile)"
    assert sharing({"others_percent_of_one_core": 85}) == (
        "shared with other work (other programs used 85% of one core meanwhile)"
    )
    assert sharing({}) == "shared with other work"  # measured before the figure was kept: as the page said then
