"""The trust rule, on real directories: which levels it walks through, which it refuses, and why."""
from __future__ import annotations

import pytest

from nxsock.core.json_input import MAX_DEPTH, JsonInputError, parse_json


class TestJsonInput:
    def test_nesting_deeper_than_the_bound_is_a_one_line_error(self) -> None:
        with pytest.raises(JsonInputError, match="nested deeper"):
            parse_json("[" * 100_000 + "]" * 100_000)
        assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None

    def test_brackets_inside_strings_do_not_count(self) -> None:
        assert parse_json('{"a": "' + "[" * 1000 + '\\"{"}') == {"a": "[" * 1000 + '"{'}

    def test_lone_surrogates_become_replacement_characters_pairs_stay(self) -> None:
        assert parse_json('{"v": "\\ud800x\\udfff", "\\udc80": "\\ud83d\\ude00"}') == {
            "v": "\ufffdx\ufffd",
            "\ufffd": "\U0001f600",
        }

    def test_a_huge_number_is_invalid_json_not_a_crash(self) -> None:
        with pytest.raises(JsonInputError):
            parse_json('{"processId": ' + "9" * 5000 + "}")
