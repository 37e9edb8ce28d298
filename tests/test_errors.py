"""Parser errors condensed to one line: ``field: what is wrong``."""

from __future__ import annotations

from normbench.cli import with_arch_hint
from normbench.errors import one_line


def nested(detail: str, given: str) -> str:
    return ('Parser key "model":\n  Does not validate against any of the Union subtypes\n'
            "  Subtypes: [<class 'normbench.tasks.base.NormbenchModule'>, <class 'NoneType'>]\n  Errors:\n"
            "    - Problem with given class_path 'normbench.tasks.lm.LMModule':\n"
            f"        {detail}\n    - Expected a <class 'NoneType'>\n"
            f"  Given value type: <class 'jsonargparse._util.NestedArg'>\n  Given value: {given}")


def test_an_option_the_model_does_not_take_is_named_with_its_full_key() -> None:
    line = one_line(nested("Option 'bogus' is not accepted", "NestedArg(key='bogus', val='3')"))
    assert line == ("model.init_args.bogus: not an option of normbench.tasks.lm.LMModule "
                    "(`--print_config` lists the options)")
    assert with_arch_hint(line) == line  # not an architecture field: no hint


def test_an_architecture_field_given_to_the_model_says_where_it_belongs() -> None:
    line = one_line(nested("unrecognized arguments: --attn_norm.component=both",
                           "NestedArg(key='attn_norm.component', val='both')"))
    assert line.startswith("model.init_args.attn_norm.component: not an option of normbench.tasks.lm.LMModule")
    assert with_arch_hint(line).endswith(
        "the architecture's options are under model.init_args.arch: --model.init_args.arch.attn_norm.component")
    assert "\n" not in with_arch_hint(line)
