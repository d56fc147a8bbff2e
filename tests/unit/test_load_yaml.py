"""load_yaml reads every shipped data file exactly as yaml.safe_load does (libyaml's C parser where
PyYAML has it, the pure-Python one otherwise), and a fault still names its line."""

from __future__ import annotations

import pytest
import yaml

from perfmodel.inputs._data import data_dir, load_yaml

FILES = sorted(data_dir().rglob("*.yaml"))


@pytest.mark.slow  # the pure-Python reference parses ~60 files: about 2 s; make test, not test-fast
def test_every_shipped_yaml_file_reads_as_safe_load_reads_it():
    assert len(FILES) > 40
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), path


def test_a_malformed_document_raises_a_yaml_error_with_its_line():
    with pytest.raises(yaml.YAMLError) as err:
        load_yaml("a: 1\nb: [2, 3\nc: 4\n")
    assert err.value.problem_mark is not None and err.value.problem_mark.line >= 1
