"""The strict readers at their edges: every line ending a CSV may use, a column named twice, a JSON object holding
one list (not two), the first item of a list checked like the others, columns from every record."""

import json

import pytest

from zoomzero_plugin.errors import DataError
from zoomzero_plugin.readers import read_csv, read_table


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_a_csv_may_end_its_lines_any_way(tmp_path, ending):
    path = tmp_path / "t.csv"
    path.write_bytes(ending.join(["qid,answer", "1,B", ""]).encode())
    assert read_csv(path) == (["qid", "answer"], [{"qid": "1", "answer": "B"}])


def test_a_column_named_twice_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("qid,answer,qid\n1,B,2\n")
    with pytest.raises(DataError, match=r"t.csv:1: column\(s\) \['qid'\] appear twice"):
        read_csv(path)


def test_a_json_object_must_hold_exactly_one_list(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"version": 2, "data": [{"qid": "a"}]}))
    assert read_table(one) == (["qid"], [{"qid": "a"}])
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"train": [{"qid": "a"}], "test": [{"qid": "b"}]}))
    with pytest.raises(DataError, match="expected a JSON list of objects, got a dict"):
        read_table(two)


def test_every_item_of_a_json_list_is_an_object_the_first_too(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([1, {"qid": "a"}]))
    with pytest.raises(DataError, match="item 0 of the list is a int"):
        read_table(path)


def test_columns_are_every_key_some_record_has(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"qid": "a"}\n{"qid": "b", "answer": "C"}\n')
    assert read_table(path)[0] == ["qid", "answer"]
