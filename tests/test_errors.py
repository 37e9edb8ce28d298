"""Parser errors condensed to one line: ``field: what is wrong``."""

from __future__ import annotations

from normbench.errors import one_line


def nested(detail: str, given: str, module: str = "normbench.tasks.lm.LMModule") -> str:
    return (
        'Parser key "model":\n  Does not validate against any of the Union subtypes\n'
        "  Subtypes: [<class 'normbench.tasks.base.NormbenchModule'>, <class 'NoneType'>]\n  Errors:\n"
        f"    - Problem with given class_path '{module}':\n"
        f"        {detail}\n    - Expected a <class 'NoneType'>\n"
        f"  Given value type: <class 'jsonargparse._util.NestedArg'>\n  Given value: {given}"
    )


def test_an_option_the_model_does_not_take_is_named_with_its_full_key() -> None:
    line = one_line(nested("Option 'bogus' is not accepted", "NestedArg(key='bogus', val='3')"))
    assert line == ("model.bogus: not an option of normbench.tasks.lm.LMModule (`--print_config` lists the options)")
    assert ";" not in line  # not an architecture field: no hint


def test_an_architecture_field_given_to_the_model_says_where_it_belongs() -> None:
    line = one_line(
        nested("unrecognized arguments: --attn_norm.component=both", "NestedArg(key='attn_norm.component', val='both')")
    )
    assert line.startswith("model.attn_norm.component: not an option of normbench.tasks.lm.LMModule")
    assert line.endswith("the architecture's options are under model.arch: --model.arch.attn_norm.component")
    assert "\n" not in line


def test_an_unknown_deeper_option_does_not_blame_the_model_class() -> None:
    """``arch`` is the model's option; ``bogus`` is what its config lacks, so the module class is not named."""
    line = one_line(nested("unrecognized arguments: --arch.bogus=1", "NestedArg(key='arch.bogus', val='1')"))
    assert line == "model.arch.bogus: not an option (`--print_config` lists the options)"


def test_a_value_of_the_wrong_type_names_the_full_key() -> None:
    message = nested(
        "Parser key \"optim.lr\":\n          Expected a <class 'float'>. Got value: abc",
        "NestedArg(key='optim.lr', val='abc')",
    )
    assert one_line(message) == "model.optim.lr: expected float, got 'abc'"
    assert one_line("unrecognized arguments: --trainer.bogus=1") == (
        "trainer.bogus: not an option (`--print_config` lists the options)"
    )


def test_the_hint_names_only_fields_of_the_models_own_architecture() -> None:
    """``num_classes`` is a field of the majority model's config, not of the LM's."""
    given = "NestedArg(key='num_classes', val='3')"
    lm = one_line(nested("unrecognized arguments: --num_classes=3", given))
    assert lm == (
        "model.num_classes: not an option of normbench.tasks.lm.LMModule (`--print_config` lists the options)"
    )
    majority = one_line(
        nested("unrecognized arguments: --num_classes=3", given, "normbench.tasks.majority.MajorityModule")
    )
    assert majority.endswith("--model.arch.num_classes")
