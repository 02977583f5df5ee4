"""The journal's keys and settings at their edges: a key is its text (1 and "1" are one question), a line in
flight that repeats a finished key is dropped, and a setting is compared both ways (added or removed)."""

import json

import pytest

from zoomzero_plugin.errors import ResumeError
from zoomzero_plugin.journal import Journal, check_settings


def test_a_key_is_its_text(tmp_path):
    path = tmp_path / "j.jsonl"
    for lines in ('{"qid": "1"}\n{"qid": 1}\n', '{"qid": 1}\n{"qid": "1"}\n'):  # a number after text, and back
        path.write_text(lines)
        with pytest.raises(ResumeError, match=":2: qid '?1'? written twice"):
            Journal(path)
    path.write_text('{"qid": 7}\n')
    journal = Journal(path)
    assert journal.done == {"7"}
    with pytest.raises(ValueError, match="already"):
        journal.append([{"qid": "7"}])


def test_a_torn_last_line_repeating_a_finished_key_is_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"qid": "a"}\n{"qid": "a"}')  # the second write of "a" was in flight: no newline
    journal = Journal(path)
    assert [r["qid"] for r in journal.records] == ["a"] and path.read_text() == '{"qid": "a"}\n'


@pytest.mark.parametrize(
    "lines, first, more, readable",
    [
        ('{"qid": "a"}\nnot json\n{"qid": "b"}\n', 2, "", 2),  # one bad line: nothing more to count
        ('{"qid": "a"}\nnot json\n[1]\n{"qid": "b"}\n', 2, " (and 1 more bad line(s))", 2),  # two: one more
        ('x\ny\nz\n{"qid": "b"}\n', 1, " (and 2 more bad line(s))", 1),
    ],
)
def test_a_damaged_journal_names_its_first_bad_line_and_counts_the_others(tmp_path, lines, first, more, readable):
    path = tmp_path / "j.jsonl"
    path.write_text(lines)
    with pytest.raises(ResumeError) as e:
        Journal(path, way_out="WAY OUT")
    assert str(e.value) == f"{path}:{first}: not JSON (Expecting value){more}; {readable} line(s) are readable. WAY OUT"


@pytest.mark.parametrize(
    "before, now, named",
    [
        ({"benchmark": "rows", "fps": 1.0}, {"benchmark": "rows"}, "fps (1.0 there, 'unset' now)"),  # removed
        ({"benchmark": "rows"}, {"benchmark": "rows", "fps": 2.0}, "fps ('unset' there, 2.0 now)"),  # added
        ({"benchmark": "rows", "cfg": {"a": 1}}, {"benchmark": "rows", "cfg": {"a": 2}}, "cfg.a (1 there, 2 now)"),
    ],
)
def test_settings_differ_either_way(tmp_path, before, now, named):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(before))
    with pytest.raises(ResumeError, match=named.replace("(", r"\(").replace(")", r"\)")):
        check_settings(path, now)
    check_settings(path, before)  # the same settings resume
